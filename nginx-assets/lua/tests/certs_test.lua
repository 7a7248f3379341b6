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
  local v2, err, missed = certs.apply(nil, { ["c.example.com"] = C }, nil, nil)
  R.check("a host cannot point at a certificate that is not stored", v2 ~= nil and err:find("not stored") and missed.hosts[1] == "c.example.com" and certs.hosts()["c.example.com"] == nil, tostring(err))
end

do -- Gateway ports: certificates keyed by the pod port, looked up first there and never served on another port
  local T = mock.fresh()
  local certs = require("portico.certs")
  local D = string.rep("d", 64)
  certs.apply({ [A] = cert("ingress"), [B] = cert("port"), [C] = cert("dflt"), [D] = cert("named") },
    { ["a.example.com"] = A, ["20001/_"] = B, ["20001/*.example.com"] = D }, nil, C)
  local function served(name, port) local c, own = certs.find(name, port); return c and c.cert.pem, own end
  local pemv, own = served("other.test", 20001)
  R.check("a name on the Gateway port gets its listener's certificate (its own)", pemv == pem("port") and own == true)
  R.check("a Gateway wildcard covers one label or more", served("x.y.example.com", 20001) == pem("named"))
  R.check("an Ingress's certificate is not what a Gateway port serves for its host", served("a.example.com", 20001) == pem("named"))
  R.check("Ingress ports never serve a Gateway's certificate", served("x.example.com") == pem("dflt") and served("a.example.com") == pem("ingress"))
  R.check("another port gets the Ingress table, then the default", served("other.test", 20002) == pem("dflt") and served("a.example.com", 20002) == pem("ingress"))
  local validate = require("portico.validate")
  R.check("validate: a port's certificates", validate.certificates_body({ hosts = { ["20001/_"] = A, ["20001/x.example"] = A, ["20001/*.example"] = A } }) == nil)
  R.check("validate: a bad host after the port is refused", validate.certificates_body({ hosts = { ["20001/x y"] = A } }) ~= nil)
  R.check("validate: a port's certificate can be removed", validate.certificates_body({ remove = { "20001/_", "20001/x.example" } }) == nil)
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
  local v, err, missed = certs.apply({ [B] = cert("big", 2000), [C] = cert("small", 100) }, { ["big.example.com"] = B, ["small.example.com"] = C }, nil, nil)
  R.check("a certificate that does not fit fails the request", v ~= nil and err ~= nil, tostring(err))
  R.check("…names the hosts left without it, and applies the rest (another tenant's certificate in the same update)",
    missed and #missed.hosts == 1 and missed.hosts[1] == "big.example.com" and certs.find("small.example.com") ~= nil
      and certs.find("small.example.com").cert.pem == pem("small", 100), missed and cjson.encode(missed))
  R.check("the failure is counted", shm.failures().certs >= 1, shm.failures().certs)
  R.check("the failure is logged", T.logged(T.ngx.ERR, "portico_certs cannot store c:" .. B))
  R.check("the other host keeps its certificate (nothing evicted)", certs.find("keep.example.com") ~= nil and certs.find("keep.example.com").cert.pem == pem("keep", 200))
  R.check("the failed host is not pointed at anything", certs.hosts()["big.example.com"] == nil)
end

-- Client certificates (auth-tls-*): CA configurations stored once, looked up per server name as the router looks
-- up hosts, asked for in the handshake with their depth, and recorded in the TLS session.
local CA1, CA2 = string.rep("1", 30), string.rep("2", 30)
local function ca(tag, depth) return { ca = pem(tag), depth = depth or 1, source = "ns/" .. tag } end

do -- stored once per CA configuration, swept when no host asks with it
  local T = mock.fresh()
  local certs = require("portico.certs")
  local v = certs.apply(nil, nil, nil, nil, { cas = { [CA1] = ca("ca-one", 2) }, hosts = { ["a.example"] = CA1, ["b.example"] = CA1 } })
  R.check("client: apply succeeds", v == 1, v)
  local d = T.ngx.shared.portico_certs
  R.check("client: two hosts, one stored CA", d:get("ca:" .. CA1) ~= nil and d:get("a:a.example") == CA1 and d:get("a:b.example") == CA1)
  certs.apply(nil, nil, nil, nil, { cas = { [CA2] = ca("ca-two") }, hosts = { ["a.example"] = CA2 } })
  R.check("client: a host moved to another CA, the first stays for the other host", d:get("ca:" .. CA1) ~= nil and d:get("ca:" .. CA2) ~= nil)
  certs.apply(nil, nil, nil, nil, { remove = { "b.example" } })
  R.check("client: a CA no host asks with any more is swept", d:get("ca:" .. CA1) == nil and d:get("a:b.example") == nil and d:get("ca:" .. CA2) ~= nil)
  local v2, err, missed = certs.apply(nil, nil, nil, nil, { hosts = { ["a.example"] = CA1 } })
  R.check("client: a host cannot point at a CA that is not stored, and stops asking (fail closed)", v2 ~= nil and tostring(err):find("not stored") and missed.clientHosts[1] == "a.example" and d:get("a:a.example") == nil, tostring(err))
end

do -- lookup: exact, one-label wildcard, "_", "-" (ask for nothing) stops it; asked in the handshake, parsed once
  local T = mock.fresh()
  local certs = require("portico.certs")
  certs.apply({ [A] = cert("exact") }, { ["a.example.com"] = A }, nil, nil, {
    cas = { [CA1] = ca("ca-one", 3), [CA2] = ca("ca-two") },
    hosts = { ["a.example.com"] = CA1, ["*.w.example.com"] = CA2, ["own.w.example.com"] = "-", ["_"] = CA1 },
  })
  local function id(name) return (certs.client_auth(name)) end
  R.check("client: exact host", id("a.example.com") == CA1)
  R.check("client: server names are case-insensitive", id("A.Example.COM") == CA1)
  R.check("client: one-label wildcard", id("x.w.example.com") == CA2)
  R.check("client: a host with its own routes below the wildcard asks for nothing", id("own.w.example.com") == nil)
  R.check("client: any other name falls to \"_\"", id("nope.test") == CA1)
  R.check("client: no server name asks for nothing", id(nil) == nil and id("") == nil)
  T.sni = "a.example.com"
  certs.select()
  R.check("client: the handshake asks with the host's CA chain and depth", T.client_verify and T.client_verify.chain.pem == pem("ca-one") and T.client_verify.depth == 3)
  R.check("client: the TLS session records the CA configuration", T.tls_session == CA1, T.tls_session)
  R.check("client: the server certificate is still chosen", T.served == pem("exact"))
  T.client_verify, T.tls_session = nil, nil
  T.sni = "own.w.example.com"
  certs.select()
  R.check("client: a host that asks for nothing gets no certificate request", T.client_verify == nil and T.tls_session == nil)
  T.sni = "x.w.example.com"
  certs.select()
  R.check("client: without a certificate of its own (placeholder) the host still asks", T.client_verify and T.client_verify.chain.pem == pem("ca-two") and T.tls_session == CA2)
  T.hello_sni = "a.example.com"
  certs.hello()
  R.check("client hello: the connection resumes only sessions of the host's CA configuration", T.tls_connection == CA1)
  T.tls_connection = nil
  T.hello_sni = "own.w.example.com"
  certs.hello()
  R.check("client hello: a host that asks for nothing keeps nginx's session context", T.tls_connection == nil)
  local parsed = T.parsed
  for _ = 1, 5 do certs.select(); certs.client_auth("a.example.com") end
  R.check("client: CAs are parsed once per worker, not per handshake", T.parsed == parsed, T.parsed .. " vs " .. parsed)
  certs.apply(nil, nil, nil, nil, { cas = { [CA2] = ca("ca-two") }, hosts = { ["a.example.com"] = CA2 } })
  R.check("client: a changed CA applies to the next handshake (no reload)", id("a.example.com") == CA2)
end

do -- validation of the certificates body's client part (api.lua checks it before anything is stored)
  mock.fresh()
  local validate = require("portico.validate")
  local good = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n"
  R.check("validate: client CAs, hosts and removals are accepted",
    validate.certificates_body({ clientCas = { [CA1] = { ca = good, depth = 2, source = "ns/ca" } }, clientHosts = { ["a.example"] = CA1, ["_"] = CA1, ["*.w.example"] = "-" }, clientRemove = { "b.example" } }) == nil)
  R.check("validate: a CA that is not only PEM certificates is refused", validate.certificates_body({ clientCas = { [CA1] = { ca = good .. "-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n", depth = 1 } } }) ~= nil)
  R.check("validate: a depth out of 1-10 is refused", validate.certificates_body({ clientCas = { [CA1] = { ca = good, depth = 11 } } }) ~= nil)
  R.check("validate: an id that is not 30 hex digits is refused", validate.certificates_body({ clientHosts = { ["a.example"] = "x" } }) ~= nil)
  R.check("validate: a host with a line break is refused", validate.certificates_body({ clientHosts = { ["a.example\nx"] = CA1 } }) ~= nil)
end

do -- ssl-reject-handshake: names Portico serves get their certificate; any other name fails the handshake
  local T = mock.fresh()
  local certs = require("portico.certs")
  certs.apply({ [A] = cert("exact"), [B] = cert("wild"), [C] = cert("dflt") },
    { ["a.example.com"] = A, ["*.w.example.com"] = B }, nil, C)
  local routes = T.ngx.shared.portico_data
  routes:safe_set("r:plain.example.com", "{}") -- a host with routes and no certificate of its own
  routes:safe_set("r:*.r.example.com", "{}")
  routes:safe_set("r:_", "{}")
  local function handshake(name, reject)
    T.sni, T.served, T.exited = name, nil, nil
    certs.select(reject)
    return T.exited, T.served
  end
  local exited, served = handshake("a.example.com", true)
  R.check("reject: a host with its own certificate is served", exited == nil and served == pem("exact"))
  exited, served = handshake("x.w.example.com", true)
  R.check("reject: a name under a wildcard certificate is served", exited == nil and served == pem("wild"))
  exited, served = handshake("Plain.Example.com", true)
  R.check("reject: a host with routes but no certificate gets the default, as in ingress-nginx", exited == nil and served == pem("dflt"))
  exited, served = handshake("x.r.example.com", true)
  R.check("reject: a name under a wildcard host with routes gets the default", exited == nil and served == pem("dflt"))
  exited, served = handshake("nope.test", true)
  R.check("reject: an unknown name fails the handshake", exited == T.ngx.ERROR and served == nil, tostring(exited))
  exited, served = handshake(nil, true)
  R.check("reject: no server name fails the handshake", exited == T.ngx.ERROR and served == nil)
  exited = handshake("__default__", true)
  R.check("reject: naming the default's own key is no host", exited == T.ngx.ERROR)
  exited = handshake("_", true)
  R.check("reject: the catch-all of rules without a host is no host", exited == T.ngx.ERROR)
  exited = handshake("y.x.w.example.com", true)
  R.check("reject: two labels below a wildcard are unknown", exited == T.ngx.ERROR)
  exited, served = handshake("nope.test", nil)
  R.check("reject off (default): an unknown name still gets the default certificate", exited == nil and served == pem("dflt"))
  for i = 1, 3 * certs.NAME_CACHE_SIZE do handshake("r-" .. i .. ".attacker.test", true) end
  R.check("reject: refused names stay within the SNI cache bound", certs.cached_names() <= certs.NAME_CACHE_SIZE)
end

do -- ssl-ciphers: a host's cipher list travels with its certificate entry and is set on the connection
  local T = mock.fresh()
  local certs = require("portico.certs")
  local D = string.rep("d", 64)
  local strict = cert("exact")
  strict.ciphers = "ECDHE-RSA-AES128-GCM-SHA256:!aNULL"
  certs.apply({ [A] = strict, [B] = cert("exact"), [C] = cert("dflt") }, { ["a.example.com"] = A, ["b.example.com"] = B }, nil, C)
  R.check("ciphers: the same certificate with a list is an entry of its own", certs.stored() == 3, certs.stored())
  local function handshake(name)
    T.sni, T.hello_sni, T.served, T.exited, T.tls_ciphers, T.tls_connection, T.tls_connection_prefix = name, name, nil, nil, nil, nil, nil
    certs.hello()
    certs.select()
    return T.served
  end
  R.check("ciphers: the host's list is set on the connection with its certificate",
    handshake("a.example.com") == pem("exact") and T.tls_ciphers == "ECDHE-RSA-AES128-GCM-SHA256:!aNULL", T.tls_ciphers)
  R.check("ciphers: …and the client hello resumes only sessions of this certificate and list",
    T.tls_connection == A:sub(1, 30) and T.tls_connection_prefix == "pk")
  R.check("ciphers: a host without a list (same certificate) keeps nginx's list and session context",
    handshake("b.example.com") == pem("exact") and T.tls_ciphers == nil and T.tls_connection == nil)
  R.check("ciphers: an unknown name gets the default certificate and nginx's list",
    handshake("nope.test") == pem("dflt") and T.tls_ciphers == nil and T.tls_connection == nil)
  T.cipher_fail = true
  handshake("a.example.com")
  R.check("ciphers: a list OpenSSL refuses fails the handshake (never the ConfigMap's list instead), logged",
    T.exited == T.ngx.ERROR and T.logged(T.ngx.ERR, "ssl%-ciphers for a.example.com"))
  T.cipher_fail = nil
  local validate = require("portico.validate")
  local good = { cert = pem("x"), key = "-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n", source = "ns/x" }
  local function body(ciphers)
    local c = { cert = good.cert, key = good.key, source = good.source, ciphers = ciphers }
    return validate.certificates_body({ certificates = { [D] = c } })
  end
  R.check("validate: a cipher list of OpenSSL's syntax is accepted",
    body("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:!aNULL:+AES256:-RC4:@STRENGTH:@SECLEVEL=2:kRSA+AES128") == nil,
    body("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:!aNULL:+AES256:-RC4:@STRENGTH:@SECLEVEL=2:kRSA+AES128"))
  R.check("validate: anything else in a cipher list is refused (space, ';', quote, newline, empty entry, too long, too many)",
    body("HIGH ALL") ~= nil and body("HIGH;ssl_protocols SSLv3") ~= nil and body("'HIGH'") ~= nil and body("HIGH\nX") ~= nil
    and body("HIGH::MEDIUM") ~= nil and body("") ~= nil and body(string.rep("A", 1025)) ~= nil
    and body(string.rep("AES128-SHA:", 64) .. "HIGH") ~= nil and body("@SECLEVEL=9") ~= nil and body(5) ~= nil)
end

R.done()
