-- tracing.lua against a mocked ngx: traceparent parsing, which routes trace, the sampling decision and what the
-- router sets for the upstream, the bounded queue, the OTLP JSON, and the export in batches over a fake cosocket.
package.path = arg[1] .. "/?.lua;" .. arg[1] .. "/tests/?.lua;" .. package.path
local T = require("mock_ngx").fresh()
local ngx = T.ngx
local cjson = require("cjson.safe")
local start = 1700000000.123
ngx.req = { start_time = function() return start end }
local timers = {}
ngx.timer = { at = function(d, f) timers[#timers + 1] = f; return true end, every = function() return true end }
-- A fake cosocket: records what is sent, answers each request with `answer` (or fails to connect).
local sent, connect_fails, answer = {}, false, { "HTTP/1.1 200 OK", "Content-Type: application/json", "Content-Length: 2", "" }
ngx.socket = { tcp = function()
  local lines, i = nil, 0
  return {
    settimeouts = function() end,
    connect = function(_, h, p) if connect_fails then return nil, "connection refused" end; return true end,
    send = function(_, data) sent[#sent + 1] = table.concat(data); lines = answer; i = 0; return true end,
    receive = function(_, what)
      if type(what) == "number" then return string.rep("x", what) end
      i = i + 1
      return lines[i]
    end,
    setkeepalive = function() return true end,
    close = function() end,
  }
end }
local failures = 0
local function check(name, cond, msg)
  if cond then print("ok - " .. name) else failures = failures + 1; print("not ok - " .. name .. ": " .. tostring(msg or "")) end
end

local tr = require("portico.tracing")
local V = ngx.var
local function reset_vars() V.portico_traceparent = nil; V.portico_span = nil; V.http_traceparent = nil end

-- traceparent -----------------------------------------------------------------------------------------------------
local TID, SID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
local t, s, smp = tr.parse("00-" .. TID .. "-" .. SID .. "-01")
check("traceparent: a valid one is read", t == TID and s == SID and smp == true)
check("traceparent: the sampled flag is bit 0", select(3, tr.parse("00-" .. TID .. "-" .. SID .. "-02")) == false)
check("traceparent: version ff, zero ids, upper case, short are invalid",
  not tr.parse("ff-" .. TID .. "-" .. SID .. "-01") and not tr.parse("00-" .. string.rep("0", 32) .. "-" .. SID .. "-01")
  and not tr.parse("00-" .. TID .. "-0000000000000000-01") and not tr.parse("00-" .. TID:upper() .. "-" .. SID .. "-01")
  and not tr.parse("00-" .. TID .. "-" .. SID) and not tr.parse("00-" .. TID .. "-" .. SID .. "-01-extra"))
check("traceparent: a later version with more fields is read as 00", tr.parse("01-" .. TID .. "-" .. SID .. "-01-later") == TID)

-- routes ------------------------------------------------------------------------------------------------------------
tr.configure({})
check("no collector: no route traces", tr.route({ enabled = true }, "/api", "Ingress/ns/web") == nil)
local BASE = { host = "198.19.239.1", port = 4318, enabled = false, trust = true, parentBased = true, sampler = "AlwaysOn", serviceName = "svc" }
local function cfg(o) local c = {}; for k, v in pairs(BASE) do c[k] = v end; for k, v in pairs(o or {}) do c[k] = v end; tr.configure(c) end
cfg()
check("global off: a route without annotation does not trace", tr.route(nil, "/api", "Ingress/ns/web") == nil)
local r = tr.route({ enabled = true }, "/api", "Ingress/ns/web")
check("global off: enable-opentelemetry true traces, named by the path, trusting by default", r and r.name == "/api" and r.trust == true)
cfg({ enabled = true })
check("global on: enable-opentelemetry false opts out", tr.route({ enabled = false }, "/api", "Ingress/ns/web") == nil)
r = tr.route({ trust = false, operationName = "checkout" }, "/api", "Ingress/ns/web")
check("annotations: trust and the operation name", r and r.trust == false and r.name == "checkout")
cfg({ enabled = true, operationName = "$namespace/$ingress_name $location_path" })
check("operation name: route variables filled in once", tr.route(nil, "/api", "Ingress/shop/web").name == "shop/web /api")
cfg({ enabled = true, operationName = "HTTP $request_method $uri" })
r = tr.route(nil, "/api", "Ingress/shop/web")
reset_vars(); V.request_method = "PUT"; V.uri = "/api/x"
tr.start(r)
check("operation name: request variables read when a sampled span starts", V.portico_span:sub(65) == "HTTP PUT /api/x", V.portico_span)

-- sampling and propagation ------------------------------------------------------------------------------------------
cfg({ enabled = true })
r = tr.route(nil, "/api", "Ingress/ns/web")
reset_vars()
tr.start(r)
local tp = V.portico_traceparent
check("AlwaysOn, no traceparent: a new sampled trace for the upstream", tp and #tp == 55 and tr.parse(tp) and tp:sub(-2) == "01", tp)
check("…and the span names no parent", V.portico_span:sub(49, 64) == "0000000000000000" and V.portico_span:sub(1, 32) == tp:sub(4, 35))
reset_vars(); V.http_traceparent = "00-" .. TID .. "-" .. SID .. "-01"
tr.start(r)
check("trusted traceparent: the trace is continued, Portico's span is the upstream's parent",
  V.portico_traceparent:sub(4, 35) == TID and V.portico_traceparent:sub(37, 52) ~= SID and V.portico_span:sub(49, 64) == SID)
reset_vars(); V.http_traceparent = "00-" .. TID .. "-" .. SID .. "-00"
tr.start(r)
check("parent-based: an unsampled parent is not sampled; the client's header goes on unchanged", V.portico_traceparent == nil and V.portico_span == nil)
cfg({ enabled = true, parentBased = false })
r = tr.route(nil, "/api", "Ingress/ns/web")
reset_vars(); V.http_traceparent = "00-" .. TID .. "-" .. SID .. "-00"
tr.start(r)
check("not parent-based: the sampler decides, the trace id is kept", V.portico_traceparent and V.portico_traceparent:sub(4, 35) == TID)
cfg({ enabled = true, trust = false })
r = tr.route(nil, "/api", "Ingress/ns/web")
reset_vars(); V.http_traceparent = "00-" .. TID .. "-" .. SID .. "-01"
tr.start(r)
check("untrusted: a new trace", V.portico_traceparent:sub(4, 35) ~= TID and V.portico_span:sub(49, 64) == "0000000000000000")
cfg({ enabled = true, trust = false, sampler = "AlwaysOff" })
r = tr.route(nil, "/api", "Ingress/ns/web")
reset_vars(); V.http_traceparent = "00-" .. TID .. "-" .. SID .. "-01"
tr.start(r)
check("AlwaysOff, untrusted: nothing recorded, the client's traceparent is not passed on", V.portico_traceparent == "-" and V.portico_span == nil)
cfg({ enabled = true, sampler = "TraceIdRatioBased", ratio = 0.01 })
r = tr.route(nil, "/api", "Ingress/ns/web")
math.randomseed(7)
local n = 0
for _ = 1, 20000 do
  reset_vars()
  tr.start(r)
  if V.portico_span then n = n + 1 end
end
check("TraceIdRatioBased 0.01: about 1 % of 20000 sampled", n > 140 and n < 260, n)

-- the queue ---------------------------------------------------------------------------------------------------------
local LINE = "200|GET|5555|8080|http|HTTP/1.1|10.0.0.9|198.19.239.2:80|" .. TID .. SID .. "0000000000000000/api\nshop.example.com\n/api/x?a=|b"
cfg({ enabled = true, maxQueueSize = 3, maxExportBatchSize = 2 })
timers = {}
V.portico_span_line = ""
tr.log()
local _, queued = tr._queue()
check("log: an unsampled request queues nothing", queued == 0)
V.portico_span_line = LINE
for _ = 1, 5 do tr.log() end
_, queued = tr._queue()
check("log: the queue is bounded", queued == 3, queued)
check("log: what does not fit is dropped and counted", ngx.shared.portico_stats:get("drop:tracing") == 2, ngx.shared.portico_stats:get("drop:tracing"))
check("log: a full batch starts an export at once", #timers >= 1)

-- OTLP JSON ---------------------------------------------------------------------------------------------------------
T.clock = start + 0.25
local body, count = tr.encode({ { LINE, start, start + 0.25 }, { (LINE:gsub("^200", "503"):gsub("0000000000000000/api", SID .. "/api")), start, start + 1 } })
local doc = cjson.decode(body)
check("encode: valid JSON with both spans", doc and count == 2, body)
local rs = doc.resourceSpans[1]
check("encode: service.name", rs.resource.attributes[1].key == "service.name" and rs.resource.attributes[1].value.stringValue == "svc")
local sp = rs.scopeSpans[1].spans
local attrs = {}
for _, a in ipairs(sp[1].attributes) do attrs[a.key] = a.value.stringValue or a.value.intValue end
check("encode: SERVER span, ids, no parent, name", sp[1].kind == 2 and sp[1].traceId == TID and sp[1].spanId == SID and sp[1].parentSpanId == nil and sp[1].name == "/api")
check("encode: times in ns since the epoch", sp[1].startTimeUnixNano == "1700000000123000000" and sp[1].endTimeUnixNano == "1700000000373000000", sp[1].startTimeUnixNano .. " " .. sp[1].endTimeUnixNano)
check("encode: attributes, old and stable names", attrs["http.method"] == "GET" and attrs["http.request.method"] == "GET" and attrs["http.status_code"] == "200"
  and attrs["http.response.status_code"] == "200" and attrs["http.target"] == "/api/x?a=|b" and attrs["http.host"] == "shop.example.com"
  and attrs["net.peer.ip"] == "10.0.0.9" and attrs["net.peer.port"] == "5555" and attrs["portico.upstream.address"] == "198.19.239.2:80"
  and attrs["http.flavor"] == "1.1")
check("encode: status Ok below 500, Error from 500; the parent", sp[1].status.code == 1 and sp[2].status.code == 2 and sp[2].parentSpanId == SID)

-- export ------------------------------------------------------------------------------------------------------------
sent = {}
tr.export()
check("export: 3 spans in batches of 2 = 2 POSTs", #sent == 2, #sent)
check("export: POST /v1/traces, JSON, with its length", sent[1]:find("POST /v1/traces HTTP/1.1\r\n", 1, true) == 1 and sent[1]:find("Content-Type: application/json", 1, true)
  and sent[1]:find("Content%-Length: %d+") ~= nil, sent[1]:sub(1, 120))
_, queued = tr._queue()
check("export: the queue is empty after", queued == 0)
for _ = 1, 3 do tr.log() end
connect_fails = true
local before = ngx.shared.portico_stats:get("drop:tracing")
tr.export()
_, queued = tr._queue()
check("export: a dead collector drops the batch (counted) and keeps the rest for the next tick", ngx.shared.portico_stats:get("drop:tracing") == before + 2 and queued == 1)

if failures > 0 then os.exit(1) end
