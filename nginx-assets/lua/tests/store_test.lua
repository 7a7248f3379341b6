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

do -- the data's generation (generation.lua): sync reads the version only when the generation moved
  local T = mock.fresh()
  local gen = 0
  package.loaded["portico.generation"] = { get = function() return gen end, bump = function() gen = gen + 1 end }
  local store = require("portico.store")
  local d = T.ngx.shared.portico_data
  local reads, during = 0, nil
  local get = d.get
  d.get = function(self, key)
    if key == "v" then
      reads = reads + 1
      if during then local f = during; during = nil; f() end
    end
    return get(self, key)
  end
  -- The version reads of one sync.
  local function sync() local before = reads; store.sync(); return reads - before end
  store.apply({ a = { endpoints = { ep("10.0.0.1") } } })
  R.check("generation: publishing a version bumps it", gen == 1, gen)
  R.check("generation: a moved generation reads the version and syncs", sync() == 1 and store.get("a") ~= nil)
  local n = 0
  for _ = 1, 5 do n = n + sync() end
  R.check("generation: unmoved, the version is not read", n == 0, n)
  store.apply({ b = { endpoints = { ep("10.0.0.2") } } })
  R.check("generation: the next version is seen", sync() == 1 and store.get("b") ~= nil)
  -- A version published while a sync runs (between its reads of the generation and of the version): that sync
  -- applies it already; the next one reads the version once more (the generation moved), finds it current, and the
  -- ones after read nothing.
  store.apply({ c = { endpoints = { ep("10.0.0.3") } } })
  during = function() store.apply({ e = { endpoints = { ep("10.0.0.5") } } }) end
  sync()
  R.check("generation: a version published during a sync is applied by it", store.get("c") ~= nil and store.get("e") ~= nil)
  R.check("generation: …the next sync reads the version once", sync() == 1)
  R.check("generation: …and the one after reads nothing", sync() == 0)
  gen = -1 -- no zone in nginx.conf: every sync reads the version
  R.check("generation: without the zone, the version is read every time", sync() == 1 and sync() == 1)
  package.loaded["portico.generation"] = nil
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
