-- Per-request metrics with ingress-nginx's names and meanings (nginx_ingress_controller_requests, the request /
-- response / upstream duration and size histograms), aggregated inside nginx: the log phase adds each request to
-- a per-worker table (no lock, no I/O, no allocation for a series seen before), and a timer moves the deltas into
-- the portico_metrics shared dict once a second with one atomic incr per changed slot. The controller reads the
-- dict over the configuration socket when Prometheus scrapes it and renders the exposition (the labels and
-- buckets are its business). Nothing is sent per request, unlike ingress-nginx's JSON-over-a-socket monitor.
--
-- A series is (route, status, method). The route is $portico_mk, set by the router to the route's labels as the
-- controller wrote them (namespace, Ingress or Route name, Service, path as written, host as written; a canary
-- request gets the canary backend appended by the balancer), so a client cannot mint label values: paths and hosts
-- are the route's, not the request's; methods outside the known list are counted as "OTHER". Requests that matched
-- no host are recorded only with --metrics-per-undefined-host, all under the catch-all host "_".
--
-- Slot layout of a series (deltas while in the worker, totals in the dict): 1 = requests, then per histogram (in
-- HISTOGRAMS order) its sum, its count, then one count per bucket (non-cumulative; the last is +Inf).
local _M = {}

local ngx = ngx
local ngx_var = ngx.var
local tonumber = tonumber
local pairs = pairs
local SEP = "\31"

-- name, bucket set: what the controller renders (reconcilers/nginx-driver/request-metrics.ts keeps the same order).
local HISTOGRAMS = {
  { "request_duration_seconds", "time" },
  { "response_duration_seconds", "time" },
  { "header_duration_seconds", "time" },
  { "connect_duration_seconds", "time" },
  { "request_size", "length" },
  { "response_size", "length" },
  { "bytes_sent", "size" },
}
_M.HISTOGRAMS = HISTOGRAMS

local METHODS = {}
for _, m in ipairs({ "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
  "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK" }) do METHODS[m] = m end

local enabled = false
local undefined_hosts = false
local bounds = {} -- per histogram: its bucket bounds
local offset = {} -- per histogram: slot of its sum (count follows, then the buckets)
local width = 1 -- slots per series
local pending = {} -- mk -> status -> method -> slots (deltas since the last flush)
local dict_name = "portico_metrics"
local CACHE_MAX = 4096
local cache, cached = {}, {} -- per histogram: value text -> { number, slot } (see entry)

local function numbers(list)
  local out = {}
  for i, v in ipairs(list or {}) do out[i] = tonumber(v) end
  return out
end

-- opts: { enabled, undefinedHosts, buckets = { time = {...}, length = {...}, size = {...} } }
function _M.configure(opts)
  opts = opts or {}
  enabled = opts.enabled == true
  undefined_hosts = opts.undefinedHosts == true
  local b = opts.buckets or {}
  width = 1
  for i, h in ipairs(HISTOGRAMS) do
    bounds[i] = numbers(b[h[2]])
    offset[i] = width + 1
    width = width + 2 + #bounds[i] + 1
  end
  pending = {}
  for i = 1, #HISTOGRAMS do cache[i] = {}; cached[i] = 0 end
end

function _M.width() return width end

local function series(mk, status, method)
  local by_status = pending[mk]
  if not by_status then by_status = {}; pending[mk] = by_status end
  local by_method = by_status[status]
  if not by_method then by_method = {}; by_status[status] = by_method end
  local s = by_method[method]
  if not s then
    s = {}
    for i = 1, width do s[i] = 0 end
    by_method[method] = s
  end
  return s
end

-- Each histogram value arrives as the text nginx formatted ("0.004", "512", "-", "0.002, 0.004"): its number and
-- bucket slot are looked up by that text, computed once per distinct text (a bounded table per histogram, emptied
-- when it grows past CACHE_MAX), so a request does no bucket scan and no tonumber in the common case.
local NONE = { false, 0 }

local function entry(i, text)
  local c = cache[i]
  local e = c[text]
  if e then return e end
  local v = tonumber(text)
  if not v or v < 0 then
    e = NONE
  else
    local bs = bounds[i]
    local n = #bs
    local k = n + 1
    for j = 1, n do
      if v <= bs[j] then k = j; break end
    end
    e = { v, offset[i] + 1 + k }
  end
  if cached[i] >= CACHE_MAX then c = {}; cache[i] = c; cached[i] = 0 end
  c[text] = e
  cached[i] = cached[i] + 1
  return e
end

local function observe(s, i, text)
  local e = entry(i, text)
  local v = e[1]
  if not v then return end
  local o = offset[i]
  s[o] = s[o] + v
  s[o + 1] = s[o + 1] + 1
  local slot = e[2]
  s[slot] = s[slot] + 1
end

local find, sub = string.find, string.sub
local get_method = ngx.req.get_method

-- The log phase of every proxied request (server-level log_by_lua, and the plugin locations' own log handlers).
-- The numbers come from one nginx variable, $portico_metrics_line (a map in http.hbs, formatted by nginx in C):
-- "request_time|upstream_response_time|upstream_header_time|upstream_connect_time|request_length|bytes_sent|labels"
-- — one variable read instead of six (each read costs a trip through the interpreter); status and method come from
-- resty.core's FFI calls. (Parsing the numbers byte by byte instead of by substrings measured 4-7k instructions
-- more per request: the per-field loops leave the compiled trace.)
function _M.log()
  if not enabled then return end
  local line = ngx_var.portico_metrics_line
  if not line then return end
  local p1 = find(line, "|", 1, true)
  local p2 = find(line, "|", p1 + 1, true)
  local p3 = find(line, "|", p2 + 1, true)
  local p4 = find(line, "|", p3 + 1, true)
  local p5 = find(line, "|", p4 + 1, true)
  local p6 = find(line, "|", p5 + 1, true)
  if not p6 then return end
  local mk = sub(line, p6 + 1)
  if mk == "" then
    if not undefined_hosts then return end
    mk = "\31\31\31\31_"
  end
  local s = series(mk, ngx.status, METHODS[get_method()] or "OTHER")
  s[1] = s[1] + 1
  observe(s, 1, sub(line, 1, p1 - 1))
  -- A request that tried several upstreams ("0.002, 0.004") or none ("-") observes no upstream time, as
  -- ingress-nginx (tonumber gives nil).
  observe(s, 2, sub(line, p1 + 1, p2 - 1))
  observe(s, 3, sub(line, p2 + 1, p3 - 1))
  observe(s, 4, sub(line, p3 + 1, p4 - 1))
  observe(s, 5, sub(line, p4 + 1, p5 - 1))
  local sent = sub(line, p5 + 1, p6 - 1)
  observe(s, 6, sent)
  observe(s, 7, sent)
end

-- Moves this worker's deltas into the shared dict. When the zone is full, nginx's incr makes room by dropping the
-- least recently updated slots (series of routes nobody requests any more); that, or a slot it still cannot take,
-- is counted in portico_stats ("fail:metrics") and logged: raise lua-shared-dicts portico_metrics.
function _M.flush()
  local d = ngx.shared[dict_name]
  if not d then return end
  local todo = pending
  pending = {}
  local failed = 0
  for mk, by_status in pairs(todo) do
    for status, by_method in pairs(by_status) do
      for method, s in pairs(by_method) do
        local base = mk .. SEP .. status .. SEP .. method .. SEP
        for i = 1, width do
          local v = s[i]
          if v ~= 0 then
            local ok, _, forcible = d:incr(base .. i, v, 0)
            if not ok or forcible then failed = failed + 1 end
          end
        end
      end
    end
  end
  if failed > 0 then
    require("portico.shm").count("fail:metrics", failed)
    ngx.log(ngx.ERR, "portico: shared dict ", dict_name, " is full: ", failed, " metric slots were dropped or made room by dropping others; raise lua-shared-dicts portico_metrics")
  end
end

-- init_worker: flush every second (and once more when the worker exits, so a reload loses nothing).
function _M.start(interval)
  if not enabled then return end
  local function tick(premature)
    _M.flush()
    if premature then return end
  end
  local ok, err = ngx.timer.every(interval or 1, tick)
  if not ok then ngx.log(ngx.ERR, "portico: cannot start the metrics timer: ", err) end
end

-- GET /portico/metrics (configuration socket): every slot as "route\31status\31method\31slot\tvalue" lines.
function _M.dump()
  local d = ngx.shared[dict_name]
  if not d then return "" end
  local keys = d:get_keys(0)
  local out = {}
  local n = 0
  for _, k in ipairs(keys) do
    local v = d:get(k)
    if v then
      n = n + 1
      out[n] = k .. "\t" .. v
    end
  end
  return table.concat(out, "\n")
end

return _M
