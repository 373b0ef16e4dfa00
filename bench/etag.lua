-- wrk driver of bench/etag.sh: GET requests drawn at random from a list of
-- paths, each with the ETag the server answered for it, sent as
-- If-None-Match when BENCH_INM=1 (the 304 path) and not otherwise (the 200
-- path).
-- Env: BENCH_PATHS (a file of "path<TAB>etag" lines), BENCH_INM (0/1),
--      BENCH_AUTH (bearer token).
-- Prints one RESULT line of JSON, as ../shared/bench/workloads/wrk.lua does.
local file = os.getenv("BENCH_PATHS")
local inm = os.getenv("BENCH_INM") == "1"
local nthreads = 0

function setup(thread)
  thread:set("tid", nthreads)
  nthreads = nthreads + 1
end

local paths, tags, headers = {}, {}, {}

function init(args)
  math.randomseed(4242 + (tid or 0))
  for line in io.lines(file) do
    local p, t = string.match(line, "^([^\t]+)\t(.*)$")
    if p then
      paths[#paths + 1] = p
      tags[#tags + 1] = t
    end
  end
  headers["Authorization"] = "Bearer " .. os.getenv("BENCH_AUTH")
end

function request()
  local i = math.random(1, #paths)
  if inm then headers["If-None-Match"] = tags[i] end
  return wrk.format("GET", paths[i], headers)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_s":%.3f,"rps":%.1f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,' ..
    '"bytes":%d,"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
end
