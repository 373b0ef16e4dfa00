package main

import (
	"fmt"
	"strings"
)

// verdict judges the samples after the warm-up: each judged table's rows
// and size plateau (its last quarter of samples, at least two, within
// tolPlateau of the maximum before them, plus a little slack for small
// tables), the resources end where they were after the warm-up (RSS within
// tolRSS; goroutines within 20% plus 10; open files within 10; database
// connections within 2 of the maximum before the last samples; goroutines
// and files without the clients' connections, one of each, whose number
// the clients decide: the writer opens more when a write is slow and
// keeps them), W2's p99
// at the end within 1.2x the one after the warm-up, and no write answered
// 5xx. It prints one line per judgement and returns the exit status.
func verdict(o options, samples []sample, start, end w2, w *writer) int {
	var post []sample
	for _, s := range samples {
		if s.at >= o.warm {
			post = append(post, s)
		}
	}
	if len(post) < 4 {
		fmt.Printf("\nverdict: FAIL: %d samples after the warm-up, too few to judge (a longer -d or a shorter -every)\n", len(post))
		return 1
	}
	n := max(2, len(post)/4)
	early, last := post[:len(post)-n], post[len(post)-n:]
	fmt.Printf("\nverdict (the %d samples after the %s warm-up; the last %d against the %d before them):\n", len(post), o.warm, n, len(early))
	ok := true
	check := func(good bool, format string, args ...any) {
		mark := "ok  "
		if !good {
			mark, ok = "FAIL", false
		}
		fmt.Printf("  %s %s\n", mark, fmt.Sprintf(format, args...))
	}
	judgeTables(o, early, last, check)
	ref, fin := func(f func(sample) float64) float64 { return peak(early, f) }, post[len(post)-1]
	rss, gor := ref(func(s sample) float64 { return float64(s.rssKB) / 1024 }), ref(func(s sample) float64 { return float64(s.goroutines - s.inbound) })
	files, conns := ref(func(s sample) float64 { return float64(s.files - s.inbound) }), ref(func(s sample) float64 { return float64(s.conns) })
	check(float64(fin.rssKB)/1024 <= rss*(1+o.tolRSS), "RSS %.1f MB at the end; at most %.1f MB after the warm-up (tolerance %.0f%%)",
		float64(fin.rssKB)/1024, rss, 100*o.tolRSS)
	check(float64(fin.goroutines-fin.inbound) <= gor*1.2+10,
		"goroutines %d at the end without the %d clients' connections; at most %.0f after the warm-up (tolerance 20%% + 10)",
		fin.goroutines-fin.inbound, fin.inbound, gor)
	check(float64(fin.files-fin.inbound) <= files+10,
		"open files %d at the end without the %d clients' connections; at most %.0f after the warm-up (tolerance 10)",
		fin.files-fin.inbound, fin.inbound, files)
	check(float64(fin.conns) <= conns+2, "database connections %d at the end; at most %.0f after the warm-up (tolerance 2)", fin.conns, conns)
	check(start.p99 > 0 && end.p99 <= 1.2*start.p99 && end.errors == 0,
		"W2 p99 %.2f ms at the end, %.2f ms after the warm-up (%.2fx; at most 1.2x), %d errors; server CPU a request %.3f and %.3f ms",
		end.p99, start.p99, end.p99/start.p99, end.errors, end.cpuMs, start.cpuMs)
	printControls(start, end)
	bad := 0
	for k, v := range w.codes {
		if strings.Contains(k, " 5") || strings.Contains(k, " 0") || strings.HasPrefix(k, "replay of") {
			bad += v
		}
	}
	check(bad == 0, "writes: %d answers 5xx, failed or replayed wrongly", bad)
	if ok {
		fmt.Println("verdict: PASS")
		return 0
	}
	fmt.Println("verdict: FAIL")
	return 1
}

// peak is the largest f of samples.
func peak(samples []sample, f func(sample) float64) float64 {
	m := 0.0
	for _, s := range samples {
		m = max(m, f(s))
	}
	return m
}

func why(t string) string {
	if t == "orders" {
		return "every order stays, by design"
	}
	return "not a table of the retention"
}

// judgeTables judges each table's plateau: rows, and the size too where
// autovacuum runs.
func judgeTables(o options, early, last []sample, check func(bool, string, ...any)) {
	for _, t := range tables {
		rows := func(s sample) float64 { return float64(s.rows[t]) }
		kb := func(s sample) float64 { return float64(s.bytes[t]) / 1024 }
		re, rl, be, bl := peak(early, rows), peak(last, rows), peak(early, kb), peak(last, kb)
		if !judged[t] {
			fmt.Printf("  info %s: rows %.0f at the end, %.0f kB (not judged: %s)\n", t, rl, bl, why(t))
			continue
		}
		if !o.autovacuum {
			check(rl <= re*(1+o.tolPlateau)+10, "%s rows plateau: last samples' max %.0f; before them %.0f (tolerance %.0f%% + 10)",
				t, rl, re, 100*o.tolPlateau)
			fmt.Printf("  info %s size %.0f kB at the end, %.0f kB before (not judged: autovacuum is off on this server)\n", t, bl, be)
			continue
		}
		check(rl <= re*(1+o.tolPlateau)+10 && bl <= be*(1+o.tolPlateau)+64,
			"%s plateaus: last samples' max %.0f rows, %.0f kB; before them %.0f rows, %.0f kB (tolerance %.0f%% + 10 rows, 64 kB)",
			t, rl, bl, re, be, 100*o.tolPlateau)
	}
}

// printControls prints what W2's two measures say beside their p99, not
// judged: the probes (the machine's share of a change in W2's cost) and
// the server's collector.
func printControls(start, end w2) {
	if start.probe > 0 {
		// Not judged: the control (probeMachine) tells the machine's
		// share of a change in W2's cost.
		fmt.Printf("       the machine probe (fixed work, not judged) took %.1f ms at the end, %.1f ms after the warm-up (%.2fx)\n",
			float64(end.probe)/1e6, float64(start.probe)/1e6, float64(end.probe)/float64(start.probe))
		fmt.Printf("       the memory probe (fixed reads the caches miss, not judged) took %.1f ms at the end, %.1f ms after the warm-up (%.2fx)\n",
			float64(end.memProbe)/1e6, float64(start.memProbe)/1e6, float64(end.memProbe)/float64(start.memProbe))
	}
	fmt.Printf("       the server's collector (not judged): %.2f collections a thousand requests at the end, %.2f after the warm-up; heap goal %.1f and %.1f MB\n",
		end.gcPer1k, start.gcPer1k, float64(end.heapGoal)/1e6, float64(start.heapGoal)/1e6)
}
