"""Tools for testing environments and the code around them.

- :func:`check_env` / :func:`check_server` / :func:`check_openapi`: the conformance suite every environment
  gets for free;
- :func:`running_server`: a real server on a free loopback port, for tests and benchmarks; :func:`refusing_url`:
  one where nothing ever answers;
- :func:`tiny_llama`: a tiny random Llama with a locally trained tokenizer (nothing downloaded);
  :func:`train_under_torchrun`: a trainer as several CPU processes under torchrun;
- :func:`held_elsewhere`: another process holding a results file or output folder, as a run does.
"""

from .conformance import ConformanceError, check_env, check_openapi, check_server, sample_tasks
from .locks import held_elsewhere
from .models import tiny_llama, tiny_tokenizer, train_under_torchrun
from .servers import free_port, free_ports, refusing_url, running_server

__all__ = [
    "ConformanceError",
    "check_env",
    "check_openapi",
    "check_server",
    "free_port",
    "free_ports",
    "held_elsewhere",
    "refusing_url",
    "running_server",
    "sample_tasks",
    "tiny_llama",
    "tiny_tokenizer",
    "train_under_torchrun",
]
