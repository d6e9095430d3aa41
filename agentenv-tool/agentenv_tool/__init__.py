"""AgentGym's five tool environments (Weather, Movie, Academia, Sheet, TODO) on local, generated worlds.

Each env lives in its own subpackage (``world`` / ``backend`` / ``tasks`` / ``env``); what they share is here:
the action format (:mod:`.actions`), tools and their schemas (:mod:`.tools`), answer and subgoal matching
(:mod:`.matching`), the progress rate (:mod:`.progress`), AgentGym's task records (:mod:`.records`) and the
episode loop (:mod:`.base`).  All five are served together by ``agentenv serve tool`` (port 36007).
"""
