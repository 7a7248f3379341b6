-- Unit tests for portico.store with a mocked ngx: change-log sync, safe_set failures counted (never evicting), and
-- endpoints nginx must never be handed refused at the writer.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local ep = mock.ep

do -- sync decodes only what changed
  mock.fresh()
  local store = require("portico.store")
  local loads = {}
  store.on_change(function(id) loads[#loads + 1] = id end)
  store.apply({ a = { endpoints = { ep("10.0.0.1") } }, b = { endpoints = { ep("10.0.0.2") } } })
  store.sync()
  R.check("first sync loads every backend", #loads == 2 and store.get("a") and store.get("b"), #loads)
  loads = {}
  store.apply({ a = { endpoints = { ep("10.0.0.3") } } })
  store.sync()
  R.check("a later sync decodes only the changed backend", #loads == 1 and loads[1] == "a" and store.get("a").endpoints[1].address == "10.0.0.3", table.concat(loads, ","))
  loads = {}
  store.sync()
  R.check("no change, no decode", #loads == 0)
  store.apply(nil, { "b" })
  store.sync()
  R.check("removal reaches the worker", store.get("b") == nil)
end

do -- a full zone: safe_set fails, is counted and logged, nothing is evicted, the previous value is kept
  local T = mock.fresh({ data = 2048 })
  local store = require("portico.store")
  local shm = require("portico.shm")
  local v1 = store.apply({ small = { endpoints = { ep("10.0.0.1") } } })
  R.check("a backend that fits is stored", v1 == 1, v1)
  local many = {}
  for i = 1, 200 do many[i] = ep("10.1." .. math.floor(i / 250) .. "." .. (i % 250 + 1)) end
  local v2, err = store.apply({ small = { endpoints = many }, other = { endpoints = { ep("10.0.0.9") } } })
  R.check("a backend that does not fit fails the request", v2 == nil and err and err:find("portico_data is full"), tostring(err))
  R.check("the failure is counted", shm.failures().data >= 1, shm.failures().data)
  R.check("the failure is logged at error level", T.logged(T.ngx.ERR, "cannot store b:small"))
  store.sync()
  R.check("the previous value of the backend that did not fit is kept", store.get("small") and #store.get("small").endpoints == 1)
  R.check("the other backend of the same request is applied and published", store.get("other") ~= nil)
  R.check("no entry was evicted", T.ngx.shared.portico_data:get("b:small") ~= nil and T.ngx.shared.portico_data:get("b:other") ~= nil)
end

do -- the writer refuses endpoints a tenant must not reach, with a count and a log line
  local T = mock.fresh()
  local store = require("portico.store")
  local shm = require("portico.shm")
  local bad = { "127.0.0.1", "127.1.2.3", "0.0.0.0", "169.254.169.254", "::1", "::", "fe80::1", "[fe80::abcd]",
    "::ffff:127.0.0.1", "::ffff:169.254.1.1", "unix:/tmp/x.sock", "localhost", "10.0.0.256", "1.2.3", "" }
  local eps = {}
  for _, a in ipairs(bad) do eps[#eps + 1] = ep(a) end
  eps[#eps + 1] = ep("10.0.0.1")
  eps[#eps + 1] = ep("2001:db8::1")
  eps[#eps + 1] = ep("::ffff:192.0.2.1")
  eps[#eps + 1] = ep("10.0.0.2", 0)
  store.apply({ x = { endpoints = eps } })
  local stored = cjson.decode(T.ngx.shared.portico_data:get("b:x")).endpoints
  local kept = {}
  for _, e in ipairs(stored) do kept[#kept + 1] = e.address end
  R.check("only routable IP literals with a valid port are stored", table.concat(kept, " ") == "10.0.0.1 2001:db8::1 ::ffff:192.0.2.1", table.concat(kept, " "))
  R.check("each refusal is counted", shm.get_count("rejected_endpoints") == #bad + 1, shm.get_count("rejected_endpoints"))
  R.check("refusals are logged with the reason", T.logged(T.ngx.WARN, "127%.0%.0%.1:80 refused %(loopback%)") and T.logged(T.ngx.WARN, "169%.254%.169%.254:80 refused %(link%-local%)"))
end

R.done()
