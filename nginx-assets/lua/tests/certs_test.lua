-- Unit tests for portico.certs with a mocked ngx: one stored copy per distinct certificate, sweeping, SNI
-- selection, a bounded per-worker SNI cache, and a full zone that fails instead of evicting other hosts.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local function pem(tag, n)
  return "-----BEGIN CERTIFICATE-----\n" .. string.rep(tag, n or 64) .. "\n-----END CERTIFICATE-----\n"
end
local function cert(tag, n) return { cert = pem(tag, n), key = pem(tag .. "k", n), source = "ns/" .. tag } end
local A, B, C = string.rep("a", 64), string.rep("b", 64), string.rep("c", 64)

do -- stored once per certificate, hosts point at it; unreferenced ones are swept
  local T = mock.fresh()
  local certs = require("portico.certs")
  local v = certs.apply({ [A] = cert("one") }, { ["a.example.com"] = A, ["b.example.com"] = A, ["*.w.example.com"] = A }, nil, nil)
  R.check("apply succeeds", v == 1, v)
  R.check("three hosts, one stored certificate", certs.stored() == 1, certs.stored())
  local h = certs.hosts()
  R.check("every host reports its Secret", h["a.example.com"] == "ns/one" and h["b.example.com"] == "ns/one" and h["*.w.example.com"] == "ns/one")
  certs.apply({ [B] = cert("two") }, { ["a.example.com"] = B }, nil, nil)
  R.check("a rotated host gets its own certificate, the shared one stays for the others", certs.stored() == 2, certs.stored())
  certs.apply(nil, nil, { "b.example.com", "*.w.example.com" }, nil)
  R.check("a certificate no host uses any more is swept", certs.stored() == 1 and T.ngx.shared.portico_certs:get("c:" .. A) == nil, certs.stored())
  local v2, err = certs.apply(nil, { ["c.example.com"] = C }, nil, nil)
  R.check("a host cannot point at a certificate that is not stored", v2 == nil and err:find("not stored") and certs.hosts()["c.example.com"] == nil, tostring(err))
end

do -- SNI selection: exact, one-label wildcard, default; parsed once per certificate
  local T = mock.fresh()
  local certs = require("portico.certs")
  certs.apply({ [A] = cert("exact"), [B] = cert("wild"), [C] = cert("dflt") },
    { ["a.example.com"] = A, ["*.w.example.com"] = B }, nil, C)
  local function served(name) local c = certs.find(name); return c and c.cert.pem end
  R.check("exact host", served("a.example.com") == pem("exact"))
  R.check("SNI is case-insensitive", served("A.Example.COM") == pem("exact"))
  R.check("one-label wildcard", served("x.w.example.com") == pem("wild"))
  R.check("two labels below a wildcard get the default", served("x.y.w.example.com") == pem("dflt"))
  R.check("unknown SNI gets the default", served("nope.test") == pem("dflt"))
  R.check("no SNI gets the default", served(nil) == pem("dflt"))
  local parsed = T.parsed
  served("a.example.com"); served("x.w.example.com"); served("nope.test")
  R.check("certificates are parsed once per worker, not per handshake", T.parsed == parsed, T.parsed .. " vs " .. parsed)
  certs.apply(nil, nil, nil, cjson.null)
  R.check("without a default, unknown SNI gets nothing (the placeholder)", served("nope.test") == nil)
end

do -- unauthenticated clients choose the SNI: the per-worker cache of names has a fixed number of entries
  mock.fresh()
  local certs = require("portico.certs")
  certs.apply({ [A] = cert("exact") }, { ["a.example.com"] = A }, nil, nil)
  for i = 1, 3 * certs.NAME_CACHE_SIZE do certs.find("random-" .. i .. ".attacker.test") end
  R.check("the SNI cache stays within its bound", certs.cached_names() <= certs.NAME_CACHE_SIZE, certs.cached_names())
  R.check("real hosts still resolve after the flood", certs.find("a.example.com") ~= nil)
end

do -- a full certificate zone: the new certificate fails (counted, logged); other hosts keep theirs
  local T = mock.fresh({ certs = 4000 })
  local certs = require("portico.certs")
  local shm = require("portico.shm")
  R.check("a first certificate fits", certs.apply({ [A] = cert("keep", 200) }, { ["keep.example.com"] = A }, nil, nil) == 1)
  local v, err = certs.apply({ [B] = cert("big", 2000) }, { ["big.example.com"] = B }, nil, nil)
  R.check("a certificate that does not fit fails the request", v == nil and err ~= nil, tostring(err))
  R.check("the failure is counted", shm.failures().certs >= 1, shm.failures().certs)
  R.check("the failure is logged", T.logged(T.ngx.ERR, "portico_certs cannot store c:" .. B))
  R.check("the other host keeps its certificate (nothing evicted)", certs.find("keep.example.com") ~= nil and certs.find("keep.example.com").cert.pem == pem("keep", 200))
  R.check("the failed host is not pointed at anything", certs.hosts()["big.example.com"] == nil)
end

R.done()
