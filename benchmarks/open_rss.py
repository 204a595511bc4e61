"""What opening the copilot on a big index costs: start-up, resident memory, a first conversation.

    SHOPCOPILOT_CACHE=WORK/cache-5000000 python benchmarks/open_rss.py \
        WORK/synthetic-5000000-seed7.jsonl.gz

The index must be built already (`benchmarks/scale.py --build-only`). Prints JSON: start-up
wall and CPU seconds, RSS and anonymous RSS (MB) after start-up and after the conversation,
and each turn's wall milliseconds. Run it twice to see cold and warm page caches.
"""

from __future__ import annotations

import json
import sys
import time

MESSAGES = (
    "I need a pair of running shoes for women",
    "under $80",
    "something lightweight with good cushioning",
    "actually make it trail running",
)


def resident_mb() -> dict[str, int]:
    """VmRSS and RssAnon of this process, in MB (Linux)."""
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon"):
                out[name] = int(value.split()[0]) // 1024
    return out


def main() -> None:
    started, cpu = time.perf_counter(), time.process_time()
    from shopcopilot.agent import Agent

    agent = Agent(sys.argv[1], warm_up=False)
    agent.warm_up()
    result: dict[str, object] = {
        "startup_s": round(time.perf_counter() - started, 1),
        "startup_cpu_s": round(time.process_time() - cpu, 1),
        "after_startup_mb": resident_mb(),
    }
    agent.reset("s", {})
    turns = []
    for turn, message in enumerate(MESSAGES, start=1):
        began = time.perf_counter()
        agent.respond("s", message, turn, 10)
        turns.append(round((time.perf_counter() - began) * 1000, 1))
    result |= {"turn_ms": turns, "after_turns_mb": resident_mb()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
