-- OpenTelemetry tracing (ingress-nginx's enable-opentelemetry and companions), without an nginx module: one SERVER
-- span per proxied request, W3C trace context in and out, exported over OTLP/HTTP with JSON bodies.
--
-- The request path does as little as possible:
--   - start() runs in the router (server rewrite phase) only for routes that trace (router.lua keeps the route's
--     settings, nil when it does not trace: then nothing here runs at all). It reads the incoming traceparent when
--     the route trusts it, decides sampling, and only for a sampled request makes the ids and writes two nginx
--     variables: $portico_traceparent (what the upstream receives; http.hbs sends it with proxy_set_header) and
--     $portico_span (trace id, span id, parent span id, span name). Variables survive the jump to a named location
--     (ngx.ctx does not), and nginx formats the rest of the span in C ($portico_span_line, a map that is empty unless
--     $portico_span is set).
--   - log() runs only where a sampled request can end (the router sends a sampled request bound for `location /`,
--     which has no log handler, to @portico_traced; the other locations have one with tracing) and reads that
--     one variable; for a sampled request it appends the line and two timestamps to a bounded
--     per-worker queue (a full queue drops the span and counts it: "drop:tracing" in portico_stats).
--   - a timer (every otel-schedule-delay-millis, or at once when a batch is full) turns the queue into OTLP JSON
--     and POSTs it to <collector>/v1/traces with a cosocket, one batch (otel-max-export-batch-size) per request, one
--     export at a time per worker. A collector that is down or slow costs a timer its timeouts, never a request.
--
-- Sampling as the OpenTelemetry SDK's ParentBased(<sampler>) when otel-sampler-parent-based: a trusted, valid
-- parent's sampled flag decides; otherwise AlwaysOn, AlwaysOff or TraceIdRatioBased (the ratio of requests, drawn
-- per request). An unsampled request keeps the client's traceparent for the upstream when the route trusts it (the
-- upstream's span then hangs under the client's, as nothing was recorded here), and sends none when it does not.
local _M = {}

local ngx = ngx
local ngx_var = ngx.var
local random = math.random
local floor = math.floor
local fmt = string.format
local sub, find, byte, gsub = string.sub, string.find, string.byte, string.gsub
local concat = table.concat

local ON, OFF, RATIO = 1, 2, 3
local active = false          -- tracing is configured (a collector); false: nothing here runs
local global_on = false       -- enable-opentelemetry: routes without an annotation of their own trace
local trust_default = true    -- opentelemetry-trust-incoming-span
local parent_based = true     -- otel-sampler-parent-based
local sampler = ON            -- otel-sampler
local ratio = 0.01            -- otel-sampler-ratio
local op_name = nil           -- opentelemetry-operation-name: compiled template (see compile), nil = the route path
local service = "nginx"       -- otel-service-name
local host, port = nil, 4318  -- the collector (OTLP/HTTP)
local max_queue, delay, batch = 2048, 5, 512
local timeout_ms = 2000

local queue, queued = {}, 0   -- this worker's spans waiting for export: { line, start, end }
local exporting = false

-- Variables an operation name may name: those of the request (read when a sampled span starts) and those of the
-- route (filled in when the router compiles the route). ingress-nginx's documented example names $service_name.
local REQUEST_VARS = { request_method = true, uri = true, host = true, scheme = true, server_port = true }
local ROUTE_VARS = { namespace = true, ingress_name = true, service_name = true, location_path = true }

-- "HTTP $request_method $uri" -> { "HTTP ", {"request_method"}, " ", {"uri"} } (literals and variable names).
local function compile(text)
  local parts, i = {}, 1
  while true do
    local s, e, name = find(text, "%$([%a_][%w_]*)", i)
    if not s then break end
    if s > i then parts[#parts + 1] = sub(text, i, s - 1) end
    parts[#parts + 1] = { name }
    i = e + 1
  end
  if i <= #text then parts[#parts + 1] = sub(text, i) end
  return parts
end

function _M.configure(opts)
  opts = opts or {}
  active = type(opts.host) == "string" and opts.host ~= ""
  host = opts.host
  port = tonumber(opts.port) or 4318
  global_on = opts.enabled == true
  trust_default = opts.trust ~= false
  parent_based = opts.parentBased ~= false
  sampler = (opts.sampler == "AlwaysOff" and OFF) or (opts.sampler == "TraceIdRatioBased" and RATIO) or ON
  ratio = tonumber(opts.ratio) or 0.01
  service = opts.serviceName or "nginx"
  op_name = (type(opts.operationName) == "string" and opts.operationName ~= "") and compile(opts.operationName) or nil
  max_queue = tonumber(opts.maxQueueSize) or 2048
  delay = (tonumber(opts.scheduleDelayMillis) or 5000) / 1000
  batch = tonumber(opts.maxExportBatchSize) or 512
  if batch > max_queue then batch = max_queue end
  timeout_ms = tonumber(opts.timeoutMillis) or 2000
  queue, queued = {}, 0
end

function _M.active() return active end

-- The router's view of a route (computed once per route and data change): nil when the route does not trace, else
-- { trust = bool, name = string | parts }. `t` is the route's `tracing` data (its Ingress's annotations), `path`
-- the rule's path as written, `source` "Ingress/<namespace>/<name>".
function _M.route(t, path, source, service_name)
  if not active then return nil end
  local on = global_on
  if type(t) == "table" and t.enabled ~= nil then on = t.enabled == true end
  if not on then return nil end
  local trust = trust_default
  if type(t) == "table" and t.trust ~= nil then trust = t.trust == true end
  local name = type(t) == "table" and type(t.operationName) == "string" and t.operationName ~= "" and t.operationName or nil
  if not name and op_name then
    -- Route variables now; request variables stay for start().
    local ns, obj = "", ""
    if type(source) == "string" then
      local a = find(source, "/", 1, true)
      local b = a and find(source, "/", a + 1, true)
      if b then ns, obj = sub(source, a + 1, b - 1), sub(source, b + 1) end
    end
    local values = { namespace = ns, ingress_name = obj, service_name = service_name or "", location_path = path or "" }
    local parts, dynamic = {}, false
    for _, p in ipairs(op_name) do
      if type(p) == "table" then
        local v = values[p[1]]
        if v then parts[#parts + 1] = v
        elseif REQUEST_VARS[p[1]] then parts[#parts + 1] = p; dynamic = true
        else parts[#parts + 1] = "" end
      else
        parts[#parts + 1] = p
      end
    end
    name = dynamic and parts or concat(parts)
  end
  return { trust = trust, name = name or path or "/" }
end

local HEX = {}
for i = 0, 255 do HEX[i] = fmt("%02x", i) end

local function hex_id(bytes)
  local out = {}
  for i = 1, bytes do out[i] = HEX[random(0, 255)] end
  local s = concat(out)
  if not find(s, "[^0]") then return hex_id(bytes) end -- all-zero ids are invalid
  return s
end

-- W3C traceparent "vv-<32 hex>-<16 hex>-ff": trace id, parent id, sampled (nil when invalid). Version ff is invalid;
-- a later version is read as 00 (its first four fields), as the specification asks.
local function parse(tp)
  if #tp < 55 then return nil end
  if byte(tp, 3) ~= 45 or byte(tp, 36) ~= 45 or byte(tp, 53) ~= 45 then return nil end
  local v = sub(tp, 1, 2)
  if v == "ff" or (v == "00" and #tp ~= 55) or (#tp > 55 and byte(tp, 56) ~= 45) then return nil end
  local tid, sid, flags = sub(tp, 4, 35), sub(tp, 37, 52), sub(tp, 54, 55)
  if find(tid, "[^0-9a-f]") or find(sid, "[^0-9a-f]") or find(flags, "[^0-9a-f]") or find(v, "[^0-9a-f]") then return nil end
  if not find(tid, "[^0]") or not find(sid, "[^0]") then return nil end
  return tid, sid, (tonumber(flags, 16) % 2) == 1
end
_M.parse = parse

-- The router, for a route that traces (`rt` from _M.route). Sets $portico_traceparent / $portico_span and returns
-- true when sampled.
function _M.start(rt)
  local tid, pid, sampled
  if rt.trust then
    local tp = ngx_var.http_traceparent
    if tp then tid, pid, sampled = parse(tp) end
  end
  if not (tid and parent_based) then
    if sampler == ON then sampled = true
    elseif sampler == OFF then sampled = false
    else sampled = random() < ratio end
  end
  if not sampled then
    -- An untrusted client's traceparent is not passed on ("-": the map in http.hbs sends none).
    if not rt.trust then ngx_var.portico_traceparent = "-" end
    return false
  end
  tid = tid or hex_id(16)
  local sid = hex_id(8)
  local name = rt.name
  if type(name) == "table" then
    local parts = {}
    for i, p in ipairs(name) do
      if type(p) == "table" then parts[i] = ngx_var[p[1]] or "" else parts[i] = p end
    end
    name = concat(parts)
  end
  ngx_var.portico_traceparent = "00-" .. tid .. "-" .. sid .. "-01"
  ngx_var.portico_span = tid .. sid .. (pid or "0000000000000000") .. gsub(name, "[%c]", "")
  return true
end

local function flush_soon()
  if exporting then return end
  local ok, err = ngx.timer.at(0, _M.export)
  if not ok then ngx.log(ngx.WARN, "portico: tracing: cannot start an export: ", err) end
end

local function drop(n, why)
  require("portico.shm").count("drop:tracing", n)
  if why then ngx.log(ngx.WARN, "portico: tracing: ", n, " spans dropped: ", why) end
end

-- Log phase (server level, and the plugin locations' handlers). $portico_span_line is "" unless start() sampled.
function _M.log()
  if not active then return end
  local line = ngx_var.portico_span_line
  if not line or line == "" then return end
  if queued >= max_queue then
    drop(1)
    return
  end
  queued = queued + 1
  queue[queued] = { line, ngx.req.start_time(), ngx.now() }
  if queued >= batch then flush_soon() end
end

-- OTLP JSON --------------------------------------------------------------------------------------------------------

local cjson = require("cjson.safe")
local str = cjson.encode

local function nanos(t)
  return fmt("%.0f000000", floor(t * 1000 + 0.5))
end

local function sattr(k, v)
  return '{"key":"' .. k .. '","value":{"stringValue":' .. str(v) .. '}}'
end

local function iattr(k, v)
  return '{"key":"' .. k .. '","value":{"intValue":"' .. v .. '"}}'
end

local FLAVORS = { ["HTTP/1.0"] = "1.0", ["HTTP/1.1"] = "1.1", ["HTTP/2.0"] = "2.0", ["HTTP/3.0"] = "3.0" }

-- One span as OTLP JSON from what log() queued: "status|method|remote_port|server_port|scheme|protocol|remote_addr|
-- upstream_addr|span\nhost\nrequest_uri" and the start and end times (seconds).
local function span_json(e)
  local line = e[1]
  local p, fields = 1, {}
  for i = 1, 8 do
    local q = find(line, "|", p, true)
    if not q then return nil end
    fields[i] = sub(line, p, q - 1)
    p = q + 1
  end
  local n1 = find(line, "\n", p, true)
  local n2 = n1 and find(line, "\n", n1 + 1, true)
  if not n2 then return nil end
  local span, hosthdr, target = sub(line, p, n1 - 1), sub(line, n1 + 1, n2 - 1), sub(line, n2 + 1)
  if #span < 64 then return nil end
  local tid, sid, pid, name = sub(span, 1, 32), sub(span, 33, 48), sub(span, 49, 64), sub(span, 65)
  local status = tonumber(fields[1]) or 0
  local method = fields[2]
  local attrs = {
    sattr("http.method", method), sattr("http.request.method", method),
    iattr("http.status_code", status), iattr("http.response.status_code", status),
    sattr("http.target", target), sattr("http.scheme", fields[5]), sattr("url.scheme", fields[5]),
    sattr("http.flavor", FLAVORS[fields[6]] or ""),
    sattr("net.peer.ip", fields[7]), sattr("client.address", fields[7]),
  }
  local rp, sp = tonumber(fields[3]), tonumber(fields[4])
  if rp then attrs[#attrs + 1] = iattr("net.peer.port", rp) end
  if sp then attrs[#attrs + 1] = iattr("net.host.port", sp) end
  if hosthdr ~= "" then attrs[#attrs + 1] = sattr("http.host", hosthdr) end
  if fields[8] ~= "" and fields[8] ~= "-" then attrs[#attrs + 1] = sattr("portico.upstream.address", fields[8]) end
  return '{"traceId":"' .. tid .. '","spanId":"' .. sid .. '"'
    .. (pid ~= "0000000000000000" and (',"parentSpanId":"' .. pid .. '"') or "")
    .. ',"name":' .. str(name) .. ',"kind":2,"startTimeUnixNano":"' .. nanos(e[2]) .. '","endTimeUnixNano":"' .. nanos(e[3])
    .. '","attributes":[' .. concat(attrs, ",") .. '],"status":{"code":' .. (status >= 500 and 2 or 1) .. '}}'
end

function _M.encode(entries)
  local spans = {}
  for _, e in ipairs(entries) do
    local s = span_json(e)
    if s then spans[#spans + 1] = s end
  end
  return '{"resourceSpans":[{"resource":{"attributes":[' .. sattr("service.name", service) .. ","
    .. sattr("telemetry.sdk.name", "portico") .. "," .. sattr("telemetry.sdk.language", "lua")
    .. ']},"scopeSpans":[{"scope":{"name":"portico"},"spans":[' .. concat(spans, ",") .. "]}]}]}", #spans
end

-- One POST /v1/traces; true, or nil and why.
local function post(body)
  local sock = ngx.socket.tcp()
  sock:settimeouts(timeout_ms, timeout_ms, timeout_ms)
  local ok, err = sock:connect(host, port)
  if not ok then return nil, "connect " .. tostring(host) .. ":" .. tostring(port) .. ": " .. tostring(err) end
  local hp = find(host, ":", 1, true) and ("[" .. host .. "]:" .. port) or (host .. ":" .. port)
  ok, err = sock:send({ "POST /v1/traces HTTP/1.1\r\nHost: ", hp, "\r\nContent-Type: application/json\r\nContent-Length: ",
    tostring(#body), "\r\nUser-Agent: portico\r\n\r\n", body })
  if not ok then sock:close(); return nil, "send: " .. tostring(err) end
  local status_line, rerr = sock:receive("*l")
  if not status_line then sock:close(); return nil, "receive: " .. tostring(rerr) end
  local code = tonumber(sub(status_line, 10, 12))
  local length, chunked = nil, false
  while true do
    local h = sock:receive("*l")
    if not h then sock:close(); return nil, "receive headers" end
    if h == "" then break end
    local lower = h:lower()
    if sub(lower, 1, 15) == "content-length:" then length = tonumber((gsub(sub(h, 16), "%s", ""))) end
    if find(lower, "^transfer%-encoding:.*chunked") then chunked = true end
  end
  local reusable = false
  if length then
    if length > 0 then sock:receive(length) end
    reusable = true
  elseif not chunked then
    reusable = false
  end
  if reusable then sock:setkeepalive(60000, 2) else sock:close() end
  if code ~= 200 then return nil, "collector answered " .. tostring(status_line) end
  return true
end

-- Timer: export everything queued, a batch per POST. One export at a time per worker.
function _M.export(premature)
  if exporting or queued == 0 then return end
  exporting = true
  local ok, err = pcall(function()
    while queued > 0 do
      local n = queued > batch and batch or queued
      local entries = {}
      for i = 1, n do entries[i] = queue[i] end
      -- The rest moves to the front (it waits for the next round).
      local rest = {}
      for i = n + 1, queued do rest[#rest + 1] = queue[i] end
      queue, queued = rest, #rest
      local body, count = _M.encode(entries)
      if count > 0 then
        local sent, why = post(body)
        if not sent then
          drop(count, why)
          break -- the collector is not there: what is left waits for the next tick (or is dropped when full)
        end
      end
    end
  end)
  exporting = false
  if not ok then ngx.log(ngx.ERR, "portico: tracing export failed: ", err) end
end

-- init_worker: a seed of this worker's own for the ids, and the export timer.
function _M.start_worker()
  if not active then return end
  local seed = 0
  local f = io.open("/dev/urandom", "rb")
  if f then
    local b = f:read(4)
    f:close()
    if b and #b == 4 then
      for i = 1, 4 do seed = seed * 256 + byte(b, i) end
    end
  end
  math.randomseed((seed + ngx.worker.pid() + floor(ngx.now() * 1000)) % 4294967296)
  local ok, err = ngx.timer.every(delay, function(premature) _M.export(premature) end)
  if not ok then ngx.log(ngx.ERR, "portico: cannot start the tracing timer: ", err) end
end

-- For tests.
function _M._queue() return queue, queued end

return _M
