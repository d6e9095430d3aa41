-- wrk script: each connection is one session of an agentenv (or AgentGym) server, stepping at random.
-- Run with as many threads as connections (wrk -tN -cN), so that each thread's state is one session's:
--   wrk -t64 -c64 -d5s -s wrk_sessions.lua http://127.0.0.1:PORT -- /babyai 0 399 "turn left|move forward"
-- Arguments: the env's route prefix, the first and last task (data_idx drawn between), the actions ("|"-separated).
-- Creates its session, resets it, steps until done, resets again; counts steps and error answers.
local prefix, first, last, actions = "", 0, 0, {}
local headers = {["Content-Type"] = "application/json"}
local state, id = "create", nil
local threads = {}
steps, errors = 0, 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  prefix, first, last = args[1], tonumber(args[2]), tonumber(args[3])
  for action in string.gmatch(args[4], "[^|]+") do table.insert(actions, action) end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
  if state == "create" then
    return wrk.format("POST", prefix .. "/create", headers, "{}")
  elseif state == "reset" then
    local body = string.format('{"id": %s, "data_idx": %d}', id, math.random(first, last))
    return wrk.format("POST", prefix .. "/reset", headers, body)
  end
  local body = string.format('{"id": %s, "action": "%s"}', id, actions[math.random(#actions)])
  return wrk.format("POST", prefix .. "/step", headers, body)
end

function response(status, headers, body)
  if state == "create" then
    id = body:match('"id"%s*:%s*(%d+)') or body:match("^%s*(%d+)")  -- {"id": n}, or AgentGym's bare n
    state = "reset"
  elseif state == "reset" then
    state = "step"
  else
    steps = steps + 1
    if status ~= 200 or body:sub(1, 9) == '{"error":' then
      errors = errors + 1
    elseif body:find('"done"%s*:%s*true') then
      state = "reset"
    end
  end
end

function done(summary, latency, requests)
  local total_steps, total_errors = 0, 0
  for _, thread in ipairs(threads) do
    total_steps = total_steps + thread:get("steps")
    total_errors = total_errors + thread:get("errors")
  end
  io.write(string.format('{"steps": %d, "errors": %d, "seconds": %.3f, "p99_ms": %.1f, "requests": %d}\n',
    total_steps, total_errors, summary.duration / 1e6, latency:percentile(99) / 1000, summary.requests))
end
