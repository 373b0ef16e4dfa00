package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sample is what one look at the server and its database finds.
type sample struct {
	at                time.Duration
	rows, bytes       map[string]int64
	rssKB             int64
	goroutines, files int64
	// inbound is the established connections to the server's port: its
	// clients' keep-alive connections (the writer's, wrk's), each an open
	// file and a goroutine of the server's that the clients decide.
	inbound  int64
	conns    int64
	created  int64
	rebuilds int64 // retention_rebuilt_total, all indexes
}

func takeSample(o options, db *sql.DB, at time.Duration, w *writer) sample {
	s := sample{at: at, rows: map[string]int64{}, bytes: map[string]int64{}, created: w.created.Load()}
	for _, t := range tables {
		// Counted exactly: the tables judged stay small, and orders'
		// count is a few ms at this size.
		var rows, size int64
		db.QueryRow(fmt.Sprintf("SELECT count(*), pg_total_relation_size('%s') FROM %s", t, t)).Scan(&rows, &size)
		s.rows[t], s.bytes[t] = rows, size
	}
	db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&s.conns)
	s.rssKB = procStatus(o.pid, "VmRSS")
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", o.pid)); err == nil {
		s.files = int64(len(ents))
	}
	s.goroutines = metric(o.base, "go_goroutines")
	s.rebuilds = metric(o.base, "retention_rebuilt_total")
	s.inbound = inbound(o.base)
	return s
}

// inbound counts the established TCP connections whose local end is the
// port of base (the server's side of each client connection), from
// /proc/net/tcp and tcp6.
func inbound(base string) int64 {
	i := strings.LastIndexByte(base, ':')
	port, err := strconv.Atoi(strings.TrimRight(base[i+1:], "/"))
	if i < 0 || err != nil {
		return 0
	}
	want := fmt.Sprintf(":%04X", port)
	var n int64
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) > 3 && strings.HasSuffix(fs[1], want) && fs[3] == "01" {
				n++
			}
		}
	}
	return n
}

// procStatus reads a kB field of /proc/PID/status.
func procStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// metric reads a series of the server's /metrics: an unlabelled one, or
// the sum of a labelled one's series.
func metric(base, name string) int64 {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sum := 0.0
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int64(f)
		}
		if rest, ok := strings.CutPrefix(line, name+"{"); ok {
			if j := strings.LastIndexByte(rest, ' '); j >= 0 {
				f, _ := strconv.ParseFloat(rest[j+1:], 64)
				sum += f
			}
		}
	}
	return int64(sum)
}

func printSample(s sample, first bool) {
	if first {
		head := "| t | orders created |"
		line := "|---:|---:|"
		for _, t := range tables {
			head += " " + t + " rows | kB |"
			line += "---:|---:|"
		}
		fmt.Println(head + " RSS MB | goroutines | open files | of which clients' connections | db conns | index rebuilds |")
		fmt.Println(line + "---:|---:|---:|---:|---:|---:|")
	}
	row := fmt.Sprintf("| %s | %d |", s.at.Round(time.Second), s.created)
	for _, t := range tables {
		row += fmt.Sprintf(" %d | %d |", s.rows[t], s.bytes[t]/1024)
	}
	fmt.Printf("%s %.1f | %d | %d | %d | %d | %d |\n", row, float64(s.rssKB)/1024, s.goroutines, s.files, s.inbound, s.conns, s.rebuilds)
}

// w2Bursts is how many bursts make a W2 measure: one burst's p99 meets
// whatever else the machine runs in those seconds, so the measure is
// their median, and every burst's p99 is printed beside it to show the
// spread.
const w2Bursts = 5

// w2 is one measure of W2: the median of w2Bursts bursts' p99 and req/s,
// and the server's CPU time per request over them (which a busy
// machine changes less than latency: it tells the service's own cost).
type w2 struct {
	p99, rps, cpuMs, pgMs float64
	errors                int
	p99s                  []float64 // each burst's, in order
	pgProcs               int       // PostgreSQL's processes counted
	// probe is probeMachine's CPU time for its fixed work, taken right
	// before the bursts and right after them (the larger).
	probe time.Duration
	// memProbe is probeMemory's, taken as probe is.
	memProbe time.Duration
	// gcPer1k is the server's garbage collections per thousand requests
	// over the bursts, and heapGoal its heap goal (go_memstats_next_gc_bytes)
	// and heapAlloc its heap in use right after them: a collector that
	// runs more often for the same work (a live heap grown toward serve's
	// soft memory limit, say) slows every function alike.
	gcPer1k             float64
	heapGoal, heapAlloc int64
}

func (m w2) String() string {
	bursts := make([]string, len(m.p99s))
	for i, p := range m.p99s {
		bursts[i] = fmt.Sprintf("%.2f", p)
	}
	s := fmt.Sprintf("p99 %.2f ms (bursts %s), %.0f req/s, %d errors (median of %d bursts), server CPU %.3f ms a request (writes included)",
		m.p99, strings.Join(bursts, " "), m.rps, m.errors, len(m.p99s), m.cpuMs)
	if m.pgProcs > 0 {
		s += fmt.Sprintf(", PostgreSQL CPU %.3f ms a request (%d processes)", m.pgMs, m.pgProcs)
	}
	s += fmt.Sprintf("; %.2f collections a thousand requests, heap goal %.1f MB, heap %.1f MB",
		m.gcPer1k, float64(m.heapGoal)/1e6, float64(m.heapAlloc)/1e6)
	return s + fmt.Sprintf("; machine probe %.1f ms, memory probe %.1f ms", float64(m.probe)/1e6, float64(m.memProbe)/1e6)
}

// treeTicks is the CPU time (clock ticks) of process pid and its children:
// PostgreSQL's postmaster, its backends and workers, live or gone. A
// child that ended (an autovacuum worker, a backend whose connection
// closed) is counted in the postmaster's cutime and cstime once it has
// reaped it, so the sum only grows; counting the live children alone read
// less after a worker ended (a negative figure) and missed its work.
func treeTicks(pid int) (ticks int64, procs int) {
	if pid == 0 {
		return 0, 0
	}
	total, procs := cpuTicks(pid)+reapedTicks(pid), 1
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			total += cpuTicks(child)
			procs++
		}
	}
	return total, procs
}

// profileW2 saves the server's CPU profile over the next d as w2-name.pb.gz
// in o.profiles, when the server serves its profiles (o.pprof); the
// returned function waits for it, then saves its heap profile (live
// objects after a collection) as heap-name.pb.gz: a -diff_base of the
// end's against the start's names whatever the run made grow.
func profileW2(o options, name string, d time.Duration) func() {
	if o.pprof == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		saveProfile(o, fmt.Sprintf("profile?seconds=%d", int(d.Seconds())), "w2-"+name)
	}()
	return func() {
		<-done
		saveProfile(o, "heap?gc=1", "heap-"+name)
	}
}

// saveProfile saves the server's /debug/pprof/path as name.pb.gz in
// o.profiles, printing why when it cannot.
func saveProfile(o options, path, name string) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s", o.pprof, path))
	if err != nil {
		fmt.Printf("profile %s: %v\n", name, err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(filepath.Join(o.profiles, name+".pb.gz"), b, 0o644)
	}
	if err != nil {
		fmt.Printf("profile %s: %v\n", name, err)
	}
}

// reapedTicks is the CPU time of process pid's children that ended and
// that it waited for (cutime and cstime).
func reapedTicks(pid int) int64 { return statPair(pid, 13) }

// cpuTicks is the user and system CPU time of process pid, in clock
// ticks (1/100 s): utime and stime.
func cpuTicks(pid int) int64 { return statPair(pid, 11) }

// statPair is the sum of two adjacent clock-tick fields of /proc/PID/stat,
// counted from the field after the command's closing parenthesis (state
// is 0: utime is 11, cutime 13), 0 when the process is gone.
func statPair(pid, i int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < i+2 {
		return 0
	}
	u, _ := strconv.ParseInt(f[i], 10, 64)
	s, _ := strconv.ParseInt(f[i+1], 10, 64)
	return u + s
}

// measureW2 runs w2Bursts bursts of W2 over REST as ../shared/bench/compare.sh
// defines it (wrk, one thread, 16 connections, a material by id 1-5000),
// with a CPU profile of the server over them named name (profileW2).
func measureW2(o options, name string) w2 {
	var p99s, rpss []float64
	probe, memProbe := probeMachine(), probeMemory()
	profiled := profileW2(o, name, w2Bursts*o.burst)
	defer profiled()
	pg0, _ := treeTicks(o.pgPID)
	errs, reqs, cpu0 := 0, 0.0, cpuTicks(o.pid)
	gc0 := metric(o.base, "go_gc_duration_seconds_count")
	for range w2Bursts {
		p99, rps, e := burstW2(o, o.base, o.token)
		if rps > 0 {
			p99s, rpss = append(p99s, p99), append(rpss, rps)
			reqs += rps * o.burst.Seconds()
		}
		errs += e
	}
	m := w2{p99s: slices.Clone(p99s), errors: errs}
	m.p99, m.rps = median(p99s), median(rpss)
	m.heapGoal, m.heapAlloc = metric(o.base, "go_memstats_next_gc_bytes"), metric(o.base, "go_memstats_heap_alloc_bytes")
	if reqs > 0 {
		m.gcPer1k = float64(metric(o.base, "go_gc_duration_seconds_count")-gc0) * 1000 / reqs
		m.cpuMs = float64(cpuTicks(o.pid)-cpu0) * 10 / reqs
		pg1, procs := treeTicks(o.pgPID)
		m.pgMs, m.pgProcs = float64(pg1-pg0)*10/reqs, procs
	}
	m.probe, m.memProbe = max(probe, probeMachine()), max(memProbe, probeMemory())
	return m
}

// burstW2 is one burst of W2 against base with token: its p99 (ms),
// req/s and errors; 0 req/s when wrk gave no result (printed).
func burstW2(o options, base, token string) (p99, rps float64, errs int) {
	cmd := exec.Command("wrk", "-t1", "-c16", fmt.Sprintf("-d%ds", int(o.burst.Seconds())), "--timeout", "5s", "-s", o.wrkLua, base)
	cmd.Env = append(os.Environ(), "BENCH_WL=2", "BENCH_TEMPLATE=/api/open-api/v1/materials/{id}", "BENCH_AUTH="+token)
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		js, ok := strings.CutPrefix(line, "RESULT ")
		if !ok {
			continue
		}
		var r struct {
			RPS        float64 `json:"rps"`
			P99        float64 `json:"p99_ms"`
			ErrStatus  int     `json:"err_status"`
			ErrTimeout int     `json:"err_timeout"`
			ErrConnect int     `json:"err_connect"`
			ErrRead    int     `json:"err_read"`
		}
		json.Unmarshal([]byte(js), &r)
		return r.P99, r.RPS, r.ErrStatus + r.ErrTimeout + r.ErrConnect + r.ErrRead
	}
	fmt.Printf("wrk gave no result: %v: %s\n", err, out)
	return 0, 0, 0
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// reference is a server W2 is compared with at the end of the soak.
type reference struct {
	name, base, token string
	pid               int
}

// compareRefs runs W2 in rounds of one burst against each of the soaked
// server (o.base, o.pid) and the refs (servers started at the end: a
// fresh process on the soaked database, and one on a fresh copy of the
// dataset), the order rotated every round, after one burst that warms
// each ref; w2Bursts rounds. It prints each side's median and CPU time a
// request and, for each ref, the median of the rounds' soaked/ref p99
// ratios. Not judged: when W2 is slower at the end than after the
// warm-up, it tells whose the difference is: the soaked process's state
// (a fresh process on the same database is faster in the same seconds),
// the soaked database's (only the fresh dataset is faster), or the
// machine's (all alike).
func compareRefs(o options, refs []reference) {
	type side struct {
		reference
		p99s      []float64
		reqs, cpu float64
		got       float64 // this round's p99
		errs      int
	}
	sides := []*side{{reference: reference{name: "soaked", base: o.base, pid: o.pid, token: o.token}}}
	for _, r := range refs {
		burstW2(o, r.base, r.token) // a new process's first requests fill its pool and caches: not counted
		sides = append(sides, &side{reference: r})
	}
	// A round's bursts meet the machine within seconds of each other, so
	// their ratio leaves out its drift, which each side's own median
	// keeps (a slow moment in one round moves one side's median more than
	// another's).
	ratios := make([][]float64, len(sides))
	for i := range w2Bursts {
		for j := range sides {
			s := sides[(i+j)%len(sides)]
			cpu0 := cpuTicks(s.pid)
			p99, rps, errs := burstW2(o, s.base, s.token)
			s.got, s.errs = p99, s.errs+errs
			if rps > 0 {
				s.p99s = append(s.p99s, p99)
				s.reqs += rps * o.burst.Seconds()
				s.cpu += float64(cpuTicks(s.pid) - cpu0)
			}
		}
		for j, s := range sides[1:] {
			if sides[0].got > 0 && s.got > 0 {
				ratios[j+1] = append(ratios[j+1], sides[0].got/s.got)
			}
		}
	}
	fmt.Println("W2 at the end beside servers started then, one burst each in turn (not judged):")
	for j, s := range sides {
		bursts := make([]string, len(s.p99s))
		for i, p := range s.p99s {
			bursts[i] = fmt.Sprintf("%.2f", p)
		}
		line := fmt.Sprintf("  %s: p99 %.2f ms (bursts %s), %d errors, CPU %.3f ms a request",
			s.name, median(slices.Clone(s.p99s)), strings.Join(bursts, " "), s.errs, s.cpu*10/max(s.reqs, 1))
		if j > 0 {
			rs := make([]string, len(ratios[j]))
			for i, r := range ratios[j] {
				rs[i] = fmt.Sprintf("%.2f", r)
			}
			line += fmt.Sprintf("; soaked/this p99 %.2fx (median of the rounds' ratios %s)", median(slices.Clone(ratios[j])), strings.Join(rs, " "))
		}
		fmt.Println(line)
	}
}
