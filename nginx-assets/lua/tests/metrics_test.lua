package.path = arg[1] .. "/?.lua;" .. arg[1] .. "/tests/?.lua;" .. package.path
local T = require("mock_ngx").fresh()
local ngx = T.ngx
ngx.shared.portico_metrics = require("mock_ngx").dict(nil, function() return T.clock end)
local start = 0
ngx.req.start_time = function() return start end
ngx.timer = { every = function() return true end }
local failures = 0
local function check(name, cond, msg)
  if cond then print("ok - " .. name) else failures = failures + 1; print("not ok - " .. name .. ": " .. tostring(msg or "")) end
end

local m = require("portico.metrics")
m.configure({ enabled = true, buckets = { time = { 0.1, 1 }, length = { 100 }, size = { 1000 } } })
-- Slots: 1 requests; per histogram sum, count, buckets (n + 1): time ×4 (2 + 3 each), length ×2 (2 + 2), size (2 + 2).
check("layout width", m.width() == 1 + 4 * 5 + 2 * 4 + 4, m.width())

local MK = "shop\31web\31api\31/api\31shop.example.com"
local function request(o)
  -- As nginx formats $portico_metrics_line (http.hbs): the module keeps ngx.var, so it is changed in place.
  local urt = o.urt or ""
  ngx.var.portico_metrics_line = table.concat({ string.format("%.3f", o.rt or 0.05), urt, urt, urt, o.len or "50", o.sent or "500", o.mk or "" }, "|")
  ngx.status = o.status or 200
  T.method = o.method or "GET"
  m.log()
end
request({ mk = MK, urt = "0.040" })
request({ mk = MK, urt = "0.500", rt = 0.6 })
request({ mk = MK, urt = "0.010, 0.020", rt = 0.03 }) -- retried: no upstream observation
request({ mk = MK, status = 404, method = "BREW" })
request({ mk = nil }) -- no host matched: not counted without undefinedHosts
m.flush()

local d = ngx.shared.portico_metrics
local function slot(status, method, i) return d:get(MK .. "\31" .. status .. "\31" .. method .. "\31" .. i) end
check("three GETs counted", slot(200, "GET", 1) == 3, slot(200, "GET", 1))
check("request time: count 3, one above 0.1 s", slot(200, "GET", 3) == 3 and slot(200, "GET", 4) == 2 and slot(200, "GET", 5) == 1 and slot(200, "GET", 6) == nil)
check("upstream time observed only for single attempts", slot(200, "GET", 8) == 2, slot(200, "GET", 8))
-- Sizes: request_size 50 ≤ 100 (slot 24), response_size 500 > 100 (+Inf, slot 29), bytes_sent 500 ≤ 1000 (slot 32).
check("size buckets: request 50 in le=100, response 500 in +Inf, bytes_sent 500 in le=1000", slot(200, "GET", 24) == 3 and slot(200, "GET", 29) == 3 and slot(200, "GET", 32) == 3 and slot(200, "GET", 22) == 150,
  tostring(slot(200, "GET", 24)) .. " " .. tostring(slot(200, "GET", 29)) .. " " .. tostring(slot(200, "GET", 32)))
check("an unknown method is OTHER", slot(404, "OTHER", 1) == 1 and slot(404, "BREW", 1) == nil)
check("a request without route labels is not counted", #d:get_keys(0) > 0 and not tostring(table.concat(d:get_keys(0), " ")):find("\31\31\31\31_", 1, true))

-- A duration beyond the largest bound: +Inf.
request({ mk = MK, method = "PUT", rt = 12.5 })
m.flush()
check("a 12.5 s request lands in +Inf", slot(200, "PUT", 6) == 1 and slot(200, "PUT", 2) == 12.5, tostring(slot(200, "PUT", 2)))

-- A second flush adds only what happened since; totals keep growing (counters never go back).
request({ mk = MK })
m.flush()
check("totals accumulate across flushes", slot(200, "GET", 1) == 4, slot(200, "GET", 1))
m.flush()
check("an idle flush changes nothing", slot(200, "GET", 1) == 4)

-- Undefined hosts: under host "_" only when asked for.
m.configure({ enabled = true, undefinedHosts = true, buckets = { time = { 1 }, length = { 1 }, size = { 1 } } })
request({ mk = "" })
m.flush()
check("undefined host counted under _", d:get("\31\31\31\31_\31" .. "200\31GET\31" .. "1") == 1)

-- The dump the controller reads: one "key\tvalue" line per slot.
local dump = m.dump()
local lines = 0
for line in dump:gmatch("[^\n]+") do
  lines = lines + 1
  assert(line:find("\t", 1, true))
end
check("dump lists every slot", lines == #d:get_keys(0), lines)

-- Disabled: log does nothing.
m.configure({ enabled = false })
local before = #d:get_keys(0)
request({ mk = MK .. "x" })
m.flush()
check("disabled: nothing recorded", #d:get_keys(0) == before)
if failures > 0 then os.exit(1) end
