"""The Rust extension under the `meshrun` package (JSON strings in and out;
use the functions of `meshrun` itself)."""

from typing import Callable, Optional

__version__: str

class Error(ValueError):
    """Bad input to meshrun; the message is the CLI's one line."""

def compile(text: str, name: str, propagate: bool = True, conservative: bool = False) -> str: ...
def cost(
    text: str,
    name: str,
    topology: str,
    peak_tflops: Optional[float] = None,
    topology_json: Optional[str] = None,
    memory_per_device: Optional[str] = None,
) -> str: ...
def run(
    text: str,
    name: str,
    inputs: list[bytes],
    check: bool = False,
    rtol: Optional[float] = None,
    repeat: int = 1,
    conservative: bool = False,
) -> tuple[list[bytes], str]: ...
def suggest(
    text: str,
    name: str,
    topology: str,
    mesh: Optional[str] = None,
    memory_per_device: Optional[str] = None,
    keep_given: bool = False,
    top: int = 3,
    topology_json: Optional[str] = None,
    progress: Optional[Callable[[int, int, int], None]] = None,
) -> str: ...
def show(text: str, name: str, all: bool = False, propagated: bool = True) -> str: ...
def signature(text: str, name: str) -> str: ...
def topologies() -> list[str]: ...
