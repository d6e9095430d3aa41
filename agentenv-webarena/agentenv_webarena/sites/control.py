"""How the env process talks to the sites' process (kept apart from the web apps, so that the env imports
no web framework to reach them)."""

#: the request header naming a session's namespace (added by the env's browser for the bundled sites)
NAMESPACE_HEADER = "x-agentenv-namespace"
#: the header carrying the control token (known to the env process only)
CONTROL_HEADER = "x-agentenv-control"
#: the path under which each site answers the control calls (reset or drop a namespace)
CONTROL_PREFIX = "/__agentenv"
#: the environment variable that hands the control token to the sites' process
CONTROL_TOKEN_ENV = "AGENTENV_WEBARENA_CONTROL"
