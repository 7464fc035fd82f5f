"""The `devices` part of Scripts/bench.sh: the device model's time with many phones described.

bench.sh's table code imports this file and calls `part`, handing it its own helpers, so the
rows land in the one table. Each run starts `fake-apns-bench --device-model --count N` for
the smaller and then the larger number of phones (BENCH_DEVICE_PHONES, default 1000,10000):
N phones described offline with one push stored on each, then the cost of one settings change
(`phone.update`), and of the one clock advance (31 days) that expires every stored push, with
the answer time of a push sent on another connection while it runs.

Rows (medians of the runs):
  - the advance with the smaller number of phones (no reference: the next row's);
  - the advance with the larger number, against the smaller: the target is about linear,
    at most 10x for 10x the phones (12x allowed for the machine's noise);
  - the push sent while the larger advance runs, against the same push with nothing
    running: target under 100 ms;
  - phone.update with the smaller and the larger number of phones, the second against the
    first (no target: one phone's change should not cost more with more phones).
"""

import statistics


def phone_counts(env):
    counts = [int(text) for text in env.get("BENCH_DEVICE_PHONES", "1000,10000").split(",")]
    if len(counts) != 2 or counts[0] <= 0 or counts[1] <= counts[0]:
        raise ValueError("BENCH_DEVICE_PHONES is two numbers of phones, the smaller first, such as 1000,10000")
    return counts


def part(bench_json, add_row, section, env, timeout, runs):
    small, large = phone_counts(env)
    section("Device model: %d and %d phones described offline, a push stored on each, expired by one "
            "31-day clock advance" % (small, large))
    reports = {small: [], large: []}
    for run in range(1, runs + 1):
        for phones in (small, large):
            # The slow model takes seconds per thousand phones; give it room.
            report = bench_json(["--device-model", "--count", str(phones)], max(timeout, 600))
            reports[phones].append(report)
            print("  run %d  %6d phones: describe %.2f s, store %.2f s, advance %8.1f ms, push during it %8.1f ms "
                  "(sent while it ran: %s; idle %.2f ms), phone.update median %.1f us" % (
                      run, phones, report["describe_seconds"], report["store_seconds"],
                      1000 * report["advance_seconds"], report["push_during_advance_ms"],
                      "yes" if report["advance_running_at_send"] else "no",
                      report["push_idle"]["median_us"] / 1000, report["update"]["median_us"]), flush=True)

    def median(phones, figure):
        return statistics.median(figure(report) for report in reports[phones])

    advance_small = median(small, lambda r: 1000 * r["advance_seconds"])
    advance_large = median(large, lambda r: 1000 * r["advance_seconds"])
    add_row("advance expiring %d stored pushes" % small, advance_small, "-", None, "ms")
    add_row("advance expiring %d stored pushes" % large, advance_large, "%d pushes" % small, advance_small, "ms",
            ("<= ~10x %d pushes" % small, lambda value: value <= 12 * advance_small))
    add_row("push answered during that advance", median(large, lambda r: r["push_during_advance_ms"]),
            "idle push", median(large, lambda r: r["push_idle"]["median_us"] / 1000), "ms",
            ("< 100 ms", lambda value: value < 100))
    update_small = median(small, lambda r: r["update"]["median_us"])
    add_row("phone.update, %d phones" % small, update_small, "-", None, "us")
    add_row("phone.update, %d phones" % large, median(large, lambda r: r["update"]["median_us"]),
            "%d phones" % small, update_small, "us")
