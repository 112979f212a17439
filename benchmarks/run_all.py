"""`make bench`: every benchmark, each printing its own table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import (
    bench_acp,
    bench_cassette,
    bench_cell_stream,
    bench_completions,
    bench_context,
    bench_conversations,
    bench_decode,
    bench_import,
    bench_inline,
    bench_inline_browser,
    bench_kernel_state,
    bench_live,
    bench_loop,
    bench_mcp,
    bench_panel,
    bench_policy,
    bench_proxy,
    bench_render,
    bench_review,
    bench_run_all,
    bench_search,
    bench_suite,
    bench_turn,
    bench_turn_cost,
)

if __name__ == "__main__":
    bench_decode.main()
    bench_import.main()
    bench_run_all.main()
    bench_loop.main()
    bench_search.main()
    bench_mcp.main()
    bench_panel.main()
    bench_render.main()
    bench_cell_stream.main()
    bench_live.main()
    bench_review.main()
    bench_proxy.main()
    bench_context.main()
    bench_cassette.main()
    bench_completions.main()
    bench_inline.main()
    bench_inline_browser.main()
    bench_conversations.main()
    bench_turn.main()
    bench_policy.main()
    bench_kernel_state.main()
    bench_turn_cost.main()
    bench_acp.main()
    bench_suite.main()
