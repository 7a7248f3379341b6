-- Unit tests for the plugin engine (portico.plugins) and the ten plugins, with a mocked ngx: each request sets the
-- route's $portico_plugins, runs the access phase, then (when nothing answered) pretends the backend answered and
-- runs the header filter. Outcomes are asserted: status, headers to the client and to the backend, logs.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local function sha256_hex(s)
  return require("portico.plugins.crypto").sha256_hex(s)
end

-- A fresh ngx with these plugins (id -> PluginInstance) and consumer sets (namespace -> ConsumerSet) stored.
local function setup(plugins, consumers, before)
  local T = mock.fresh()
  if before then before(T) end
  local store = require("portico.store")
  local v, err = store.apply_all({ p = { upsert = plugins or {} }, k = { upsert = consumers or {} } })
  assert(v, err)
  local engine = require("portico.plugins")
  return T, engine, store
end

-- One request through the plugin location. o: plugins ("a,b"), method, uri, args (table), query (raw), headers,
-- ip, host, scheme, upstream = { status, headers } (what the backend answers when the request is proxied).
-- Returns { status, proxied, headers (to the client), req (headers to the backend), body }.
local function request(T, engine, o)
  T.headers = {}
  for k, v in pairs(o.headers or {}) do T.headers[k:lower()] = v end
  T.args = o.args or {}
  T.method = o.method or "GET"
  T.ngx.ctx = {}
  T.ngx.status = 0
  T.exited, T.new_uri = nil, nil
  T.printed, T.captures = {}, {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.portico_plugins = o.plugins or ""
  v.remote_addr = o.ip or "192.0.2.10"
  v.uri = o.uri or "/"
  v.host = o.host or "a.example"
  v.http_host = o.http_host
  v.scheme = o.scheme or "http"
  v.args = o.query
  v.request_uri = (o.uri or "/") .. (o.query and ("?" .. o.query) or "")
  v.portico_upstream_host = ""
  engine.access()
  local proxied = T.exited == nil
  if proxied then
    local up = o.upstream or {}
    T.ngx.status = up.status or 200
    for k, x in pairs(up.headers or {}) do T.ngx.header[k] = x end
  end
  engine.header_filter()
  local status = T.ngx.status
  if T.exited and T.exited ~= 200 then status = T.exited end
  local out = {}
  for k, x in pairs(T.resp_headers) do out[k] = x end
  return { status = status, proxied = proxied, headers = out, req = T.headers, body = table.concat(T.printed) }
end

local function plugin(type_, fields)
  local p = { name = "ns/" .. type_, type = type_ }
  for k, v in pairs(fields or {}) do p[k] = v end
  return p
end

local function logs_contain(T, s)
  for _, l in ipairs(T.logs) do
    if l.msg:find(s, 1, true) then return true end
  end
  return false
end

---------------------------------------------------------------------------------------------------------- engine
do
  local T, engine = setup({
    ip = plugin("ip-restriction", { deny = { "192.0.2.0/24" }, status = 403 }),
    rw = plugin("rewrite", { path = "/rewritten" }),
  })
  local r = request(T, engine, { plugins = "rw,ip", ip = "192.0.2.7", uri = "/x" })
  R.check("engine: handlers run in PLUGIN_ORDER whatever the route's order (ip-restriction before rewrite)",
    r.status == 403 and not r.proxied and T.new_uri == nil, r.status)
  r = request(T, engine, { plugins = "rw,ip", ip = "198.51.100.1", uri = "/x" })
  R.check("engine: an allowed request runs the rest of the chain and is proxied", r.proxied and T.new_uri == "/rewritten")
  r = request(T, engine, { plugins = "", uri = "/x" })
  R.check("engine: no plugins, nothing runs", r.proxied and T.new_uri == nil and next(T.ngx.ctx) == nil)
end

do
  local T, engine, store = setup({ ok = plugin("request-headers", { set = { { name = "x-a", value = "1" } } }) })
  local r = request(T, engine, { plugins = "ok,ghost" })
  R.check("engine: an id the store does not have fails closed with 503", r.status == 503 and not r.proxied, r.status)
  R.check("engine: …and an error log line names it", T.logged(T.ngx.ERR, "plugin ghost is not programmed"))
  R.check("engine: …the client learns nothing about why", not r.body:find("ghost"), r.body)
  store.apply_all({ p = { upsert = { ghost = plugin("request-headers", { set = { { name = "x-b", value = "2" } } }) } } })
  r = request(T, engine, { plugins = "ok,ghost" })
  R.check("engine: once the plugin exists the same route works (the failed chain was dropped)",
    r.proxied and r.req["x-a"] == "1" and r.req["x-b"] == "2", r.status)
  local chains = engine._chains()
  local before = chains["ok,ghost"]
  request(T, engine, { plugins = "ok,ghost" })
  R.check("engine: the compiled chain is reused by later requests", chains["ok,ghost"] == before)
  store.apply_all({ p = { upsert = { ok = plugin("request-headers", { set = { { name = "x-a", value = "changed" } } }) } } })
  r = request(T, engine, { plugins = "ok,ghost" })
  R.check("engine: a changed plugin drops the chains using it and is compiled again", r.req["x-a"] == "changed" and chains["ok,ghost"] ~= before)
  store.apply_all({ p = { remove = { "ghost" } } })
  r = request(T, engine, { plugins = "ok,ghost" })
  R.check("engine: a removed plugin fails its routes closed again", r.status == 503)
end

do -- a plugin that cannot be compiled (a regex the engine refuses): 503, logged once per 10 s
  local T, engine = setup({ bad = plugin("rewrite", { regex = { pattern = "[unclosed", replacement = "/x" } }) })
  local r = request(T, engine, { plugins = "bad" })
  R.check("engine: an instance that cannot be compiled fails closed", r.status == 503)
  R.check("engine: …with the compile error logged", T.logged(T.ngx.ERR, "plugin bad cannot be compiled"))
end

do -- log phase: the balancer's EWMA feed and passive health, when the module exists
  local health_calls = 0
  local T, engine = setup({}, {}, function()
    package.loaded["portico.health"] = { log = function() health_calls = health_calls + 1 end }
  end)
  local balancer = require("portico.balancer")
  local fed = 0
  local orig = balancer.log
  balancer.log = function() fed = fed + 1 end
  engine.log()
  engine.log()
  R.check("engine: log() feeds the balancer and passive health on every request", fed == 2 and health_calls == 2, fed .. " " .. health_calls)
  balancer.log = orig
  package.loaded["portico.health"] = nil
  T.ngx.var.portico_backend = ""
end

----------------------------------------------------------------------------------------------------- ip-restriction
do
  local ipr = require("portico.plugins.ip_restriction")
  local function parses(s) return ipr.parse_cidr(s) ~= nil end
  R.check("ip-restriction: CIDRs and bare addresses parse (IPv4, IPv6, embedded IPv4)",
    parses("10.0.0.0/8") and parses("192.0.2.7") and parses("2001:db8::/32") and parses("::1") and parses("::ffff:10.0.0.0/104") and parses("0.0.0.0/0"))
  R.check("ip-restriction: malformed CIDRs are refused",
    not parses("10.0.0.0/33") and not parses("10.0.0/8") and not parses("2001:db8::/129") and not parses("1::2::3") and not parses("10.0.0.256") and not parses("x") and not parses("10.0.0.0/08"))
  local T, engine = setup({
    allow = plugin("ip-restriction", { allow = { "10.0.0.0/8", "2001:db8::/32" }, deny = { "10.1.0.0/16", "2001:db8:dead::/48" }, status = 403 }),
    deny = plugin("ip-restriction", { deny = { "127.0.0.1", "::1" }, status = 451 }),
    all = plugin("ip-restriction", { allow = { "0.0.0.0/0", "::/0" }, status = 403 }),
  })
  local function st(p, ip) return request(T, engine, { plugins = p, ip = ip }).status end
  R.check("ip-restriction: a client in the allow list passes", st("allow", "10.9.8.7") == 200 and st("allow", "2001:db8:1::5") == 200)
  R.check("ip-restriction: deny wins over allow", st("allow", "10.1.2.3") == 403 and st("allow", "2001:db8:dead:beef::1") == 403)
  R.check("ip-restriction: with an allow list, others are refused", st("allow", "192.0.2.1") == 403 and st("allow", "2001:db9::1") == 403)
  R.check("ip-restriction: an IPv4-mapped IPv6 client is matched as IPv4", st("allow", "::ffff:10.9.8.7") == 200 and st("allow", "::ffff:10.1.0.1") == 403)
  R.check("ip-restriction: a deny-only list refuses with the configured status", st("deny", "127.0.0.1") == 451 and st("deny", "::1") == 451 and st("deny", "127.0.0.2") == 200)
  R.check("ip-restriction: /0 allows every address of its family", st("all", "203.0.113.9") == 200 and st("all", "fe80::1") == 200)
  R.check("ip-restriction: a prefix boundary is exact", st("allow", "11.0.0.0") == 403 and st("allow", "9.255.255.255") == 403)
end

---------------------------------------------------------------------------------------------------------- cors
do
  local T, engine = setup({
    c = plugin("cors", { allowOrigins = { "https://app.example", "https://*.example.com", "http://*.dev.test:8080" },
      allowMethods = { "GET", "PUT" }, allowHeaders = { "x-token", "content-type" }, exposeHeaders = { "x-total" },
      allowCredentials = true, maxAgeSeconds = 600 }),
    star = plugin("cors", { allowOrigins = { "*" }, allowMethods = {}, allowHeaders = {}, exposeHeaders = {}, allowCredentials = false, maxAgeSeconds = 0 }),
    gw = plugin("cors", { allowOrigins = { "https://app.example" }, allowMethods = {}, allowHeaders = {}, exposeHeaders = { "x-total" }, allowCredentials = false, maxAgeSeconds = 5, answerPreflights = true }),
  })
  local pre = { plugins = "c", method = "OPTIONS", headers = { origin = "https://app.example", ["access-control-request-method"] = "PUT" } }
  local r = request(T, engine, pre)
  R.check("cors: a preflight from an allowed origin is answered 204 by Portico", r.status == 204 and not r.proxied, r.status)
  R.check("cors: …with the origin, methods, headers, max-age, credentials and Vary",
    r.headers["access-control-allow-origin"] == "https://app.example" and r.headers["access-control-allow-methods"] == "GET, PUT"
    and r.headers["access-control-allow-headers"] == "x-token, content-type" and r.headers["access-control-max-age"] == "600"
    and r.headers["access-control-allow-credentials"] == "true" and r.headers["vary"] == "Origin"
    and r.headers["access-control-expose-headers"] == "x-total")
  local function origin_ok(o)
    local x = request(T, engine, { plugins = "c", headers = { origin = o } })
    return x.headers["access-control-allow-origin"] == o
  end
  R.check("cors: a wildcard origin matches one or more labels", origin_ok("https://a.example.com") and origin_ok("https://a.b.example.com"))
  R.check("cors: …not the parent domain itself, another scheme, or a look-alike",
    not origin_ok("https://example.com") and not origin_ok("http://a.example.com") and not origin_ok("https://aexample.com") and not origin_ok("https://a.example.com.evil.test"))
  R.check("cors: a wildcard with a port matches only that port", origin_ok("http://x.dev.test:8080") and not origin_ok("http://x.dev.test") and not origin_ok("http://x.dev.test:8081"))
  R.check("cors: exact origins compare case-insensitively", origin_ok("HTTPS://APP.EXAMPLE"))
  r = request(T, engine, { plugins = "c", headers = { origin = "https://app.example" }, upstream = { headers = { vary = "Accept-Encoding" } } })
  R.check("cors: a normal request is proxied and gets Allow-Origin, Credentials and Expose-Headers",
    r.proxied and r.headers["access-control-allow-origin"] == "https://app.example" and r.headers["access-control-allow-credentials"] == "true"
    and r.headers["access-control-expose-headers"] == "x-total")
  R.check("cors: …and Origin is added to the backend's Vary", type(r.headers["vary"]) == "table" and r.headers["vary"][1] == "Accept-Encoding" and r.headers["vary"][2] == "Origin")
  r = request(T, engine, { plugins = "c", method = "OPTIONS", headers = { origin = "https://evil.test", ["access-control-request-method"] = "PUT" } })
  R.check("cors: an origin that does not match gets no CORS headers and goes on to the backend",
    r.proxied and r.headers["access-control-allow-origin"] == nil and r.headers["access-control-allow-methods"] == nil)
  r = request(T, engine, { plugins = "c" })
  R.check("cors: a request without Origin is untouched", r.proxied and r.headers["access-control-allow-origin"] == nil)
  r = request(T, engine, { plugins = "star", method = "OPTIONS", headers = { origin = "https://any.test", ["access-control-request-method"] = "DELETE", ["access-control-request-headers"] = "x-a, x-b\r\nx: y" } })
  R.check("cors: \"*\" without credentials answers Allow-Origin: * (no Vary)", r.status == 204 and r.headers["access-control-allow-origin"] == "*" and r.headers["vary"] == nil)
  R.check("cors: with no methods/headers configured the requested ones are echoed (sanitized)",
    r.headers["access-control-allow-methods"] == "DELETE" and r.headers["access-control-allow-headers"] == "x-a, x-bx y", tostring(r.headers["access-control-allow-headers"]))
  R.check("cors: max-age 0 sends no Max-Age, no credentials header when off", r.headers["access-control-max-age"] == nil and r.headers["access-control-allow-credentials"] == nil)
  r = request(T, engine, { plugins = "gw", method = "OPTIONS", headers = { origin = "https://evil.test", ["access-control-request-method"] = "PUT" } })
  R.check("cors answerPreflights (Gateway API): a preflight from an origin not allowed is answered here, without CORS headers",
    r.status == 204 and not r.proxied and r.headers["access-control-allow-origin"] == nil, r.status)
  r = request(T, engine, { plugins = "gw", headers = { origin = "https://evil.test" } })
  R.check("cors answerPreflights: a normal request from it still goes on, without CORS headers", r.proxied and r.headers["access-control-allow-origin"] == nil)
end

------------------------------------------------------------------------------------------------------- key-auth
local consumers = {
  team = { consumers = {
    { name = "alice", username = "alice@team", keys = { sha256_hex("alice-key-1") }, basic = {
      { username = "alice", hash = "sha256$0a1b2c$" .. sha256_hex("0a1b2c" .. "wonderland") },
      -- made with: printf 'sha-pass' | openssl sha1 -binary | base64   (htpasswd -s computes the same)
      { username = "alice-sha", hash = "{SHA}xO2etOilyqtV8o1RvvnmkeBx7QI=" },
    }, plugins = {} },
    { name = "bob", username = "bob", keys = { sha256_hex("bob-key") }, basic = {
      -- made with: python3 -c 'import crypt; print(crypt.crypt("s3cret-pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<5)))'
      { username = "bob", hash = "$2b$05$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm" },
      { username = "bob-a", hash = "$2a$05$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm" },
      { username = "bob-y", hash = "$2y$05$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm" },
    }, plugins = {} },
  } },
  other = { consumers = { { name = "carol", username = "carol", keys = { sha256_hex("carol-key") }, basic = {}, plugins = {} } } },
}

do
  local T, engine = setup({
    ka = plugin("key-auth", { namespace = "team", header = "apikey", hideCredentials = true }),
    kq = plugin("key-auth", { namespace = "team", header = "x-api-key", query = "key", hideCredentials = true }),
    keep = plugin("key-auth", { namespace = "team", header = "apikey", hideCredentials = false }),
  }, consumers)
  local r = request(T, engine, { plugins = "ka" })
  R.check("key-auth: a request without a key → 401", r.status == 401 and not r.proxied and r.body == "Unauthorized\n", r.status .. " " .. r.body)
  r = request(T, engine, { plugins = "ka", headers = { apikey = "nope" } })
  R.check("key-auth: an unknown key → 401", r.status == 401)
  r = request(T, engine, { plugins = "ka", headers = { apikey = "carol-key" } })
  R.check("key-auth: a key of another namespace's consumer → 401", r.status == 401)
  r = request(T, engine, { plugins = "ka", headers = { apikey = "alice-key-1", ["x-consumer-username"] = "admin", ["x-consumer-id"] = "0" } })
  R.check("key-auth: a known key is proxied with X-Consumer-Username", r.proxied and r.req["x-consumer-username"] == "alice@team")
  R.check("key-auth: …client-sent X-Consumer-* are removed", r.req["x-consumer-id"] == nil)
  R.check("key-auth: …the consumer is the request's identity", T.ngx.ctx.portico_consumer and T.ngx.ctx.portico_consumer.name == "alice")
  R.check("key-auth: …and the key header is removed (hideCredentials)", r.req["apikey"] == nil)
  r = request(T, engine, { plugins = "kq", args = { key = "bob-key", page = "2" }, query = "key=bob-key&page=2" })
  R.check("key-auth: the key may come from the query parameter", r.proxied and r.req["x-consumer-username"] == "bob")
  R.check("key-auth: …which is removed from the query, other parameters kept", T.args.key == nil and T.args.page == "2")
  r = request(T, engine, { plugins = "kq", headers = { ["x-api-key"] = "bob-key" } })
  R.check("key-auth: a configured header name is used", r.proxied and r.req["x-api-key"] == nil)
  r = request(T, engine, { plugins = "keep", headers = { apikey = "bob-key" } })
  R.check("key-auth: hideCredentials false keeps the key header", r.proxied and r.req["apikey"] == "bob-key")
  R.check("key-auth: keys are never logged", not logs_contain(T, "nope") and not logs_contain(T, "alice-key-1"))
end

----------------------------------------------------------------------------------------------------- basic-auth
do -- users of the plugin itself (ingress-nginx auth-secret: htpasswd apr1 and crypt(3) sha512), no consumers
  local T, engine = setup({
    own = plugin("basic-auth", { namespace = "team", realm = "Own", hideCredentials = false, users = {
      { username = "ann", hash = "$apr1$Xy1.z/$sGfCQmdkAWdv/qehfFZVh1" },
      { username = "sam", hash = "$6$abcdefgh$rP8HGKCp.1XL6v4/dKJWt8.Mje.Xx588Q58o5Hfy3wyttFxf99.pN6DeqPRQPaOGw195uNwfom.plH0ubplAr0" },
    } }),
  }, {})
  local function auth(user, pass) return { authorization = "Basic " .. mock.b64enc(user .. ":" .. pass) } end
  local crypto = require("portico.plugins.crypto")
  R.check("basic-auth: apr1 equals openssl passwd -apr1", crypto.apr1("password", "saltsalt") == "$apr1$saltsalt$yAAkm4libquA.ZWLHbSBq/")
  local r = request(T, engine, { plugins = "own", headers = auth("ann", "open-sesame") })
  R.check("basic-auth: an htpasswd $apr1$ user passes, no consumer identity asserted", r.proxied and r.req["x-consumer-username"] == nil)
  r = request(T, engine, { plugins = "own", headers = auth("ann", "open-sesame!") })
  R.check("basic-auth: …a wrong apr1 password → 401", r.status == 401)
  r = request(T, engine, { plugins = "own", headers = auth("sam", "letmein") })
  R.check("basic-auth: a crypt(3) $6$ (sha512) user passes", r.proxied)
  r = request(T, engine, { plugins = "own", headers = auth("alice", "wonderland") })
  R.check("basic-auth: the plugin's own users only (no consumers)", r.status == 401)
end

do
  local T, engine = setup({
    ba = plugin("basic-auth", { namespace = "team", realm = "Team area", hideCredentials = true }),
    keep = plugin("basic-auth", { namespace = "team", realm = "x", hideCredentials = false }),
  }, consumers)
  local crypto = require("portico.plugins.crypto")
  local bcrypts = 0
  local real = crypto.bcrypt
  -- Each bcrypt "takes" 60 ms of the test's clock.
  crypto.bcrypt = function(...) bcrypts = bcrypts + 1; T.clock = T.clock + 0.06; return real(...) end
  local function auth(user, pass) return { authorization = "Basic " .. mock.b64enc(user .. ":" .. pass) } end
  local r = request(T, engine, { plugins = "ba" })
  R.check("basic-auth: no credentials → 401 with the realm's challenge", r.status == 401 and r.headers["www-authenticate"] == 'Basic realm="Team area"')
  r = request(T, engine, { plugins = "ba", headers = auth("alice", "wonderland") })
  R.check("basic-auth: sha256$salt$hex (hex = sha256(salt text .. password)) passes", r.proxied and r.req["x-consumer-username"] == "alice@team")
  R.check("basic-auth: …Authorization is removed (hideCredentials)", r.req["authorization"] == nil)
  r = request(T, engine, { plugins = "ba", headers = auth("alice", "Wonderland") })
  R.check("basic-auth: a wrong password → 401", r.status == 401 and r.headers["www-authenticate"] ~= nil)
  r = request(T, engine, { plugins = "ba", headers = auth("alice-sha", "sha-pass") })
  R.check("basic-auth: {SHA} (htpasswd -s) passes", r.proxied and r.req["x-consumer-username"] == "alice@team")
  r = request(T, engine, { plugins = "ba", headers = auth("nobody", "x") })
  R.check("basic-auth: an unknown user → 401", r.status == 401)
  -- (It was checked against the namespace's typical hash, one of the bcrypt ones: see "unknown user" below.)
  bcrypts = 0
  r = request(T, engine, { plugins = "ba", headers = { authorization = "Basic !!!" } })
  R.check("basic-auth: a malformed header → 401", r.status == 401)
  r = request(T, engine, { plugins = "keep", headers = auth("bob", "s3cret-pw") })
  R.check("basic-auth: bcrypt $2b$ passes", r.proxied and r.req["x-consumer-username"] == "bob" and bcrypts == 1, bcrypts)
  R.check("basic-auth: hideCredentials false keeps Authorization", r.req["authorization"] ~= nil)
  r = request(T, engine, { plugins = "ba", headers = auth("bob", "s3cret-pw") })
  R.check("basic-auth: a verified bcrypt password is remembered (no second bcrypt)", r.proxied and bcrypts == 1, bcrypts)
  T.clock = T.clock + 61
  r = request(T, engine, { plugins = "ba", headers = auth("bob", "s3cret-pw") })
  R.check("basic-auth: …for 60 s, then verified again", r.proxied and bcrypts == 2, bcrypts)
  r = request(T, engine, { plugins = "ba", headers = auth("bob-a", "s3cret-pw") })
  local ok_a = r.proxied
  r = request(T, engine, { plugins = "ba", headers = auth("bob-y", "s3cret-pw") })
  R.check("basic-auth: bcrypt $2a$ and $2y$ pass", ok_a and r.proxied)
  r = request(T, engine, { plugins = "ba", headers = auth("bob", "wrong-pw") })
  R.check("basic-auth: a wrong bcrypt password → 401", r.status == 401)
  T.clock = math.floor(T.clock) + 5
  local n0 = bcrypts
  local limited
  for i = 1, 25 do
    r = request(T, engine, { plugins = "ba", headers = auth("bob", "guess-" .. i) })
    if r.status == 429 then limited = r; break end
  end
  R.check("basic-auth: at most 200 ms of bcrypt per second per worker, then 429 with Retry-After",
    limited and limited.headers["retry-after"] == "1" and bcrypts - n0 == 4, bcrypts - n0)
  r = request(T, engine, { plugins = "ba", headers = auth("bob", "s3cret-pw") })
  R.check("basic-auth: …a remembered password still passes meanwhile", r.proxied)
  local leaked = false
  for _, l in ipairs(T.logs) do
    if l.msg:find("s3cret", 1, true) or l.msg:find("wonderland", 1, true) or l.msg:find("guess", 1, true) or l.msg:find("Wonderland", 1, true) then leaked = true end
  end
  R.check("basic-auth: passwords are never logged (only consumer names)", not leaked and T.logged(nil, "consumer alice"))
  crypto.bcrypt = real
end

do -- a hash whose cost is over the bound is never computed, even when a configuration bypassed validation
  local crypto = require("portico.plugins.crypto")
  -- made with python3's crypt.crypt("s3cret-pw", setting) (libxcrypt): a correct password for each
  local BC13 = "$2b$13$abcdefghijklmnopqrstuuSr6OaimwjwH2ZzldVoT0EAYMWXPPa7a"
  local SHA_OVER = "$6$rounds=500001$saltsalt$G7UhrsdZGl4PCjw1ZJR8mRslgXEVNFpOPPdGVDlfSr54IvFzMDIM0wicfhAHD6u6LmN2rRGL6r.FIdAE/5Lz//"
  local SHA_AT = "$6$rounds=500000$saltsalt$/YvYs9BnJAFVUNsxjza6ogWq5fwtUcQiNDSDpBETa1/ZIsJnO0m.8D97ez5Ko5eNVWRWNkzyIWSXhBdnxTY9S/"
  R.check("basic-auth: crypt refuses bcrypt cost 13 and sha512-crypt rounds=500001 (bounds 12 / 500,000) without computing them",
    crypto.bcrypt("s3cret-pw", BC13) == nil and crypto.bcrypt("s3cret-pw", SHA_OVER) == nil
      and crypto.bcrypt("x", "$2b$31$abcdefghijklmnopqrstuu") == nil and crypto.bcrypt("x", "$6$rounds=999999999$salt") == nil
      and crypto.bcrypt("x", "$5$rounds=0500000$salt") == nil and crypto.bcrypt("x", "$y$j9T$salt") == nil)
  R.check("basic-auth: …and computes them at the bound", crypto.bcrypt("s3cret-pw", SHA_AT) == SHA_AT)
  local T, engine = setup({
    over = plugin("basic-auth", { namespace = "team", realm = "r", hideCredentials = false, users = {
      { username = "mallory", hash = BC13 }, { username = "mel", hash = SHA_OVER } } }),
  }, {})
  local function auth(user, pass) return { authorization = "Basic " .. mock.b64enc(user .. ":" .. pass) } end
  local r1 = request(T, engine, { plugins = "over", headers = auth("mallory", "s3cret-pw") })
  local r2 = request(T, engine, { plugins = "over", headers = auth("mel", "s3cret-pw") })
  R.check("basic-auth: a user whose hash is over the bound is refused (401), even with the right password", r1.status == 401 and r2.status == 401)
  local validate = require("portico.validate")
  local function users(h) return validate.plugin("team_ba", plugin("basic-auth", { namespace = "team", users = { { username = "u", hash = h } } })) end
  R.check("validate: a basic-auth user with bcrypt cost 31 or sha512-crypt 999999999 rounds is refused, cost 12 and 500,000 are not",
    users("$2b$31$abcdefghijklmnopqrstuuSr6OaimwjwH2ZzldVoT0EAYMWXPPa7a") ~= nil and users("$6$rounds=999999999$saltsalt$x") ~= nil
      and users(BC13) ~= nil and users("$2b$12$abcdefghijklmnopqrstuuSr6OaimwjwH2ZzldVoT0EAYMWXPPa7a") == nil and users(SHA_AT) == nil,
    tostring((users(SHA_AT))))
  local cs = validate.consumer_set("team", { consumers = { { name = "m", username = "m", keys = {}, plugins = {}, basic = {
    { username = "m", hash = "$2b$31$abcdefghijklmnopqrstuuSr6OaimwjwH2ZzldVoT0EAYMWXPPa7a" } } } } })
  R.check("validate: a consumer's bcrypt hash of cost 31 is refused", cs ~= nil and cs:find("cost 4%-12") ~= nil, tostring(cs))
end

do -- an unknown user costs what a known one typically does (the realm's typical hash is checked, then 401)
  local B10 = "$2b$10$abcdefghijklmnopqrstuu0123456789012345678901234567890"
  local T, engine = setup({
    own = plugin("basic-auth", { namespace = "team", realm = "r", hideCredentials = false, users = {
      { username = "ann", hash = "$apr1$Xy1.z/$sGfCQmdkAWdv/qehfFZVh1" },
      { username = "bo", hash = B10 }, { username = "cy", hash = "$2y$10$zyxwvutsrqponmlkjihgfe0123456789012345678901234567890" },
    } }),
    ba = plugin("basic-auth", { namespace = "team", realm = "r", hideCredentials = false }),
  }, consumers)
  local crypto = require("portico.plugins.crypto")
  local real = crypto.bcrypt
  local calls = {}
  crypto.bcrypt = function(password, hash) calls[#calls + 1] = hash; return real(password, hash) end
  local function auth(user, pass) return { authorization = "Basic " .. mock.b64enc(user .. ":" .. pass) } end
  local r = request(T, engine, { plugins = "own", headers = auth("nobody", "guess") })
  R.check("basic-auth: unknown user: the password is checked against a hash of the realm's typical scheme and cost ($2?$10$), then 401",
    r.status == 401 and #calls == 1 and calls[1]:match("^%$2[aby]%$10%$") ~= nil, tostring(calls[1]))
  calls = {}
  r = request(T, engine, { plugins = "own", headers = auth("bo", "guess") })
  R.check("basic-auth: …as a known user's wrong password is (one bcrypt of cost 10)", r.status == 401 and #calls == 1 and calls[1] == B10)
  calls = {}
  r = request(T, engine, { plugins = "ba", headers = auth("nobody", "guess") })
  R.check("basic-auth: unknown consumer user: checked against the namespace's typical hash (bcrypt cost 5), then 401",
    r.status == 401 and #calls == 1 and calls[1]:match("^%$2[aby]%$05%$") ~= nil, tostring(calls[1]))
  R.check("basic-auth: crypto.typical picks the most common cost", crypto.typical({ "{SHA}a", "$2b$05$x", "$2a$05$y", "$apr1$a$b" }) == "$2b$05$x"
    and crypto.typical({ "$apr1$a$b" }) == "$apr1$a$b" and crypto.typical({}) == nil)
  crypto.bcrypt = real
end

do -- a consumer's hash changing invalidates what was remembered
  local T, engine, store = setup({ ba = plugin("basic-auth", { namespace = "team", realm = "r", hideCredentials = true }) }, consumers)
  local function auth(user, pass) return { authorization = "Basic " .. mock.b64enc(user .. ":" .. pass) } end
  local r = request(T, engine, { plugins = "ba", headers = auth("bob", "s3cret-pw") })
  local first = r.proxied
  local changed = { consumers = { { name = "bob", username = "bob", keys = {}, plugins = {}, basic = {
    { username = "bob", hash = "sha256$ff$" .. sha256_hex("ff" .. "new-pw") } } } } }
  store.apply_all({ k = { upsert = { team = changed } } })
  r = request(T, engine, { plugins = "ba", headers = auth("bob", "s3cret-pw") })
  local old_refused = r.status == 401
  r = request(T, engine, { plugins = "ba", headers = auth("bob", "new-pw") })
  R.check("basic-auth: changed consumers are used at once (old password refused, new one accepted)", first and old_refused and r.proxied)
end

-------------------------------------------------------------------------------------------------- external-auth
do
  local T, engine = setup({
    ea = plugin("external-auth", { backendId = "ns_auth_80", path = "/verify?x=1", method = "GET", forwardHeaders = {},
      upstreamHeaders = { "x-user", "x-groups" }, clientHeaders = { "www-authenticate", "location" }, timeoutMs = 1500 }),
    some = plugin("external-auth", { backendId = "ns_auth_80", path = "/v", method = "POST", forwardHeaders = { "authorization" },
      upstreamHeaders = {}, clientHeaders = {}, timeoutMs = 200 }),
  })
  local answer = { status = 200, header = { ["X-User"] = "u1" }, body = "" }
  T.capture = function() return answer end
  local r = request(T, engine, { plugins = "ea", method = "PUT", uri = "/doc", query = "a=1", host = "app.example", scheme = "https",
    headers = { cookie = "s=1", ["x-user"] = "forged", ["x-groups"] = "admins", ["x-forwarded-for"] = "6.6.6.6" } })
  local c = T.captures[1]
  R.check("external-auth: one subrequest to the internal location with the auth backend, timeouts, URI and method",
    c and c.uri == "/_portico_internal/auth" and c.opts.vars.portico_auth_backend == "ns_auth_80" and c.opts.vars.portico_auth_timeouts == "1.500 1.500 1.500"
    and c.opts.vars.portico_auth_uri == "/verify?x=1" and c.opts.vars.portico_auth_method == "GET" and c.opts.method == T.ngx.HTTP_GET)
  R.check("external-auth: the subrequest carries the client's headers and X-Forwarded-Method/-Uri/-Host/-Proto",
    c.headers.cookie == "s=1" and c.headers["x-forwarded-method"] == "PUT" and c.headers["x-forwarded-uri"] == "/doc?a=1"
    and c.headers["x-forwarded-host"] == "app.example" and c.headers["x-forwarded-proto"] == "https")
  R.check("external-auth: …with X-Forwarded-For set to the client address, not the client's own value", c.headers["x-forwarded-for"] == "192.0.2.10")
  R.check("external-auth: 2xx → proxied with the auth response's upstreamHeaders", r.proxied and r.req["x-user"] == "u1")
  R.check("external-auth: …an upstreamHeader the auth service did not send is removed (no client forgery)", r.req["x-groups"] == nil)
  R.check("external-auth: …and the client's own headers are back as they were", r.req.cookie == "s=1" and r.req["x-forwarded-method"] == nil and r.req["x-forwarded-for"] == "6.6.6.6")
  answer = { status = 401, header = { ["WWW-Authenticate"] = 'Bearer realm="x"', ["X-Secret"] = "no" }, body = "denied" }
  r = request(T, engine, { plugins = "ea" })
  R.check("external-auth: 401 → 401 to the client with clientHeaders only", r.status == 401 and not r.proxied
    and r.headers["www-authenticate"][1] == 'Bearer realm="x"' and r.headers["x-secret"] == nil)
  answer = { status = 403, header = { Location = "https://login.example/" }, body = "" }
  r = request(T, engine, { plugins = "ea" })
  R.check("external-auth: 403 → 403 with Location copied", r.status == 403 and r.headers["location"][1] == "https://login.example/")
  for _, s in ipairs({ 500, 404, 302, 504, 502 }) do
    answer = { status = s, header = {}, body = "" }
    r = request(T, engine, { plugins = "ea" })
    R.check("external-auth: auth service answering " .. s .. " → 503 (fails closed)", r.status == 503 and not r.proxied, r.status)
  end
  R.check("external-auth: …with the reason logged", T.logged(T.ngx.ERR, "auth service ns_auth_80 timed out") and T.logged(T.ngx.ERR, "answered 500"))
  answer = { status = 204, header = {}, body = "" }
  r = request(T, engine, { plugins = "some", headers = { authorization = "Bearer t", cookie = "c=1", ["user-agent"] = "ua" } })
  c = T.captures[1]
  R.check("external-auth: forwardHeaders limits what the auth service sees (plus X-Forwarded-*)",
    c.headers.authorization == "Bearer t" and c.headers.cookie == nil and c.headers["user-agent"] == nil and c.headers["x-forwarded-method"] == "GET"
    and c.opts.method == T.ngx.HTTP_POST and c.opts.vars.portico_auth_timeouts == "0.200 0.200 0.200")
  R.check("external-auth: …and the proxied request still has every header", r.proxied and r.req.cookie == "c=1" and r.req["user-agent"] == "ua")
end

------------------------------------------------------------------------------- external-auth, ingress-nginx mode
do -- auth-url with nginx auth_request's semantics
  local function nx(fields)
    local n = { scheme = "http", host = "auth.example", alwaysSetCookie = false, timeouts = { connect = 5, send = 60, read = 60 } }
    for k, v in pairs(fields or {}) do n[k] = v end
    return plugin("external-auth", { backendId = "auth_oauth2_4180", path = "/oauth2/auth", method = "GET", forwardHeaders = {},
      upstreamHeaders = { "x-auth-request-user", "x-auth-request-email" }, clientHeaders = {}, timeoutMs = 60000, ingressNginx = n })
  end
  local T, engine = setup({
    an = nx(),
    signin = nx({ signin = { "https://login.example/start?rd=", { v = "rd" } } }),
    always = nx({ alwaysSetCookie = true }),
    post = nx({ method = "POST", scheme = "https", requestRedirect = { "https://", { v = "host" }, { v = "request_uri" } } }),
    cached = nx({ cache = { key = { { v = "http_authorization" } }, ttl = { ["200"] = 300, ["401"] = 60 } } }),
    evil = nx({ signin = { "https://login.example/start?u=", { v = "uri" } } }),
    hdrs = nx({ setHeaders = { { name = "x-team", value = { "blue" } }, { name = "x-client", value = { "ip=", { v = "remote_addr" }, " ua=", { v = "http_user_agent" } } },
      { name = "x-original-method", value = { "OVERRIDE" } } } }),
  })
  local answer = { status = 200, header = { ["X-Auth-Request-User"] = "alice", ["Set-Cookie"] = "_oauth2=abc; Path=/" }, body = "" }
  T.capture = function() return answer end
  local r = request(T, engine, { plugins = "an", method = "PUT", uri = "/doc", query = "a=1", host = "app.example",
    headers = { host = "app.example", cookie = "s=1", authorization = "Bearer t", ["x-auth-request-email"] = "forged@x",
      ["x-forwarded-for"] = "6.6.6.6", ["x-forwarded-proto"] = "https", ["x-forwarded-host"] = "evil.example" } })
  local c = T.captures[1]
  R.check("auth-url: one subrequest, GET unless auth-method, to the auth URL's scheme, host and URI",
    c and c.uri == "/_portico_internal/auth" and c.opts.method == T.ngx.HTTP_GET and c.opts.vars.portico_auth_method == "GET"
    and c.opts.vars.portico_auth_scheme == "http" and c.opts.vars.portico_auth_host == "auth.example"
    and c.opts.vars.portico_auth_uri == "/oauth2/auth" and c.opts.vars.portico_auth_backend == "auth_oauth2_4180"
    and c.opts.vars.portico_auth_timeouts == "5.000 60.000 60.000")
  R.check("auth-url: the client's headers go, with X-Original-URL / -Method, X-Sent-From, X-Real-IP, X-Forwarded-For, X-Auth-Request-Redirect",
    c.headers.cookie == "s=1" and c.headers.authorization == "Bearer t" and c.headers["x-original-url"] == "http://app.example/doc?a=1"
    and c.headers["x-original-method"] == "PUT" and c.headers["x-sent-from"] == "nginx-ingress-controller"
    and c.headers["x-real-ip"] == "192.0.2.10" and c.headers["x-forwarded-for"] == "192.0.2.10"
    and c.headers["x-auth-request-redirect"] == "/doc?a=1")
  R.check("auth-url: …X-Forwarded-Proto removed, a client's X-Forwarded-Host replaced, no X-Original-URI without auth-method",
    c.headers["x-forwarded-proto"] == nil and c.headers["x-forwarded-host"] == "app.example" and c.headers["x-original-uri"] == nil)
  R.check("auth-url: 2xx → proxied with auth-response-headers copied", r.proxied and r.req["x-auth-request-user"] == "alice")
  R.check("auth-url: …one the auth service did not send is removed (no client forgery)", r.req["x-auth-request-email"] == nil)
  R.check("auth-url: …the client's own headers are back as they were", r.req["x-forwarded-proto"] == "https" and r.req["x-original-url"] == nil and r.req["x-forwarded-for"] == "6.6.6.6")
  R.check("auth-url: …and the auth response's Set-Cookie is added to the answer", r.headers["set-cookie"] and r.headers["set-cookie"][1] == "_oauth2=abc; Path=/")
  r = request(T, engine, { plugins = "an", upstream = { status = 500, headers = { ["Set-Cookie"] = "app=1" } } })
  R.check("auth-url: …but not to an error answer of the backend (add_header without always)", r.headers["set-cookie"] == "app=1", tostring(r.headers["set-cookie"]))
  T.captures = {}
  r = request(T, engine, { plugins = "hdrs", headers = { ["user-agent"] = "Agent 1.0\r\nX-Evil: 1", ["x-team"] = "forged" } })
  c = T.captures[1]
  R.check("auth-proxy-set-headers: the ConfigMap's headers reach the auth subrequest (text, variables; control characters encoded, spaces kept), replacing the client's and Portico's own",
    c and c.headers["x-team"] == "blue" and c.headers["x-client"] == "ip=192.0.2.10 ua=Agent 1.0%0D%0AX-Evil: 1"
    and c.headers["x-original-method"] == "OVERRIDE", c and (tostring(c.headers["x-client"]) .. " " .. tostring(c.headers["x-team"])))
  R.check("auth-proxy-set-headers: …the proxied request gets the client's own header back", r.proxied and r.req["x-team"] == "forged")
  answer = { status = 401, header = { ["WWW-Authenticate"] = 'Bearer realm="x"', ["Set-Cookie"] = "c=1", ["X-Secret"] = "no" }, body = "who" }
  r = request(T, engine, { plugins = "an" })
  R.check("auth-url: 401 → 401 with the auth service's WWW-Authenticate, nothing else of its answer",
    r.status == 401 and not r.proxied and r.headers["www-authenticate"] == 'Bearer realm="x"' and r.headers["set-cookie"] == nil and r.headers["x-secret"] == nil)
  r = request(T, engine, { plugins = "always" })
  R.check("auth-url: auth-always-set-cookie: the Set-Cookie comes with the 401 too", r.status == 401 and r.headers["set-cookie"] == "c=1")
  r = request(T, engine, { plugins = "signin", uri = "/a b/c", query = "x=1&y=2", host = "app.example", headers = { host = "app.example:8443" } })
  R.check("auth-url: auth-signin: 401 → 302 to the sign-in URL with rd = the request's own URL (escaped)",
    r.status == 302 and r.headers["location"] == "https://login.example/start?rd=http://app.example:8443" .. "%2Fa%20b%2Fc%3Fx%3D1%26y%3D2", tostring(r.headers["location"]))
  R.check("auth-url: …with the auth response's Set-Cookie", r.headers["set-cookie"] == "c=1")
  r = request(T, engine, { plugins = "signin", host = "app.example", headers = { host = "evil.example" } })
  R.check("auth-url: …rd uses $host when the Host header names another host (no open redirect)", r.headers["location"] == "https://login.example/start?rd=http://app.example%2F", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "evil", uri = "/x\r\nSet-Cookie: pwned=1" })
  R.check("auth-url: a variable cannot break the Location header (CR/LF and spaces are percent-encoded)",
    r.status == 302 and r.headers["location"] == "https://login.example/start?u=/x%0D%0ASet-Cookie:%20pwned=1" and r.headers["set-cookie"] == "c=1", tostring(r.headers["location"]))
  answer = { status = 403, header = { ["Set-Cookie"] = "c=1" }, body = "" }
  r = request(T, engine, { plugins = "signin" })
  R.check("auth-url: 403 → 403 (no sign-in redirect, no cookie)", r.status == 403 and r.headers["location"] == nil and r.headers["set-cookie"] == nil)
  for _, st in ipairs({ 500, 404, 302, 504, 502, 0 }) do
    answer = st > 0 and { status = st, header = {}, body = "" } or nil
    r = request(T, engine, { plugins = "an" })
    R.check("auth-url: auth service answering " .. st .. " → 500 (auth_request)", r.status == 500 and not r.proxied, r.status)
  end
  R.check("auth-url: …with the reason logged", T.logged(T.ngx.ERR, "auth service auth_oauth2_4180 timed out") and T.logged(T.ngx.ERR, "answering 500"))
  answer = { status = 204, header = {}, body = "" }
  r = request(T, engine, { plugins = "post", uri = "/p", query = "q=1", host = "app.example", scheme = "https", method = "DELETE" })
  c = T.captures[1]
  R.check("auth-url: auth-method → proxy_method, with X-Original-URI and X-Scheme; https auth URL",
    r.proxied and c.opts.vars.portico_auth_method == "POST" and c.opts.method == T.ngx.HTTP_GET and c.opts.vars.portico_auth_scheme == "https"
    and c.headers["x-original-uri"] == "/p?q=1" and c.headers["x-scheme"] == "https" and c.headers["x-original-method"] == "DELETE")
  R.check("auth-url: auth-request-redirect with variables", c.headers["x-auth-request-redirect"] == "https://app.example/p?q=1", tostring(c.headers["x-auth-request-redirect"]))

  -- auth-cache-key / auth-cache-duration
  local calls = 0
  T.capture = function() calls = calls + 1; return answer end
  answer = { status = 200, header = { ["X-Auth-Request-User"] = "alice" }, body = "" }
  local a1 = request(T, engine, { plugins = "cached", headers = { authorization = "Bearer A" } })
  local a2 = request(T, engine, { plugins = "cached", headers = { authorization = "Bearer A", ["x-auth-request-user"] = "mallory" } })
  R.check("auth-cache-key: the second request with the same key is answered from the cache (one subrequest)",
    calls == 1 and a1.proxied and a2.proxied and a2.req["x-auth-request-user"] == "alice", calls)
  answer = { status = 401, header = {}, body = "" }
  local b1 = request(T, engine, { plugins = "cached", headers = { authorization = "Bearer B" } })
  local b2 = request(T, engine, { plugins = "cached", headers = { authorization = "Bearer B" } })
  R.check("auth-cache-key: another key asks the auth service; a cached 401 stays 401", calls == 2 and b1.status == 401 and b2.status == 401, calls)
  R.check("auth-cache-key: …keys are per plugin and host, hashed", T.ngx.shared.portico_auth_cache:get("cached:a.example:" .. T.ngx.encode_base64(T.ngx.sha1_bin("Bearer A"))) ~= nil)
  T.clock = T.clock + 61
  request(T, engine, { plugins = "cached", headers = { authorization = "Bearer B" } })
  local a3 = request(T, engine, { plugins = "cached", headers = { authorization = "Bearer A" } })
  R.check("auth-cache-duration: per status (401 after 60 s expired, 200 still cached)", calls == 3 and a3.proxied, calls)
  answer = { status = 503, header = {}, body = "" }
  request(T, engine, { plugins = "cached", headers = { authorization = "Bearer C" } })
  request(T, engine, { plugins = "cached", headers = { authorization = "Bearer C" } })
  R.check("auth-cache-duration: a status not listed is not cached", calls == 5, calls)
  local other = request(T, engine, { plugins = "cached", host = "b.example", headers = { authorization = "Bearer A" } })
  R.check("auth-cache-key: another host has its own keyspace", calls == 6 and other.status == 500, calls)
  for i, hdr in ipairs({ { ["Set-Cookie"] = "s=1" }, { ["Cache-Control"] = "no-store" }, { ["Cache-Control"] = "private, max-age=60" }, { Vary = "*" } }) do
    answer = { status = 200, header = hdr, body = "" }
    local k = "Bearer D" .. i
    request(T, engine, { plugins = "cached", headers = { authorization = k } })
    request(T, engine, { plugins = "cached", headers = { authorization = k } })
  end
  R.check("auth-cache-key: as proxy_cache, answers with Set-Cookie, no-store, private or Vary: * are not kept", calls == 14, calls)
end

----------------------------------------------------------------------------------------------------- rate-limit
do
  local T, engine = setup({
    rl = plugin("rate-limit", { rate = 1, periodSeconds = 1, burst = 2, by = "ip", status = 429, key = "rl" }),
    minute = plugin("rate-limit", { rate = 1, periodSeconds = 60, burst = 0, by = "ip", status = 429, key = "minute" }),
    hdr = plugin("rate-limit", { rate = 1, periodSeconds = 1, burst = 0, by = "header", header = "x-tenant", status = 503, key = "hdr" }),
    ex = plugin("rate-limit", { rate = 1, periodSeconds = 60, burst = 0, by = "ip", status = 503, key = "ex", exempt = { "198.51.100.0/24" } }),
  })
  local function go(p, o) o = o or {}; o.plugins = p; return request(T, engine, o) end
  local a, b, c = go("rl"), go("rl"), go("rl")
  local d = go("rl")
  R.check("rate-limit: 1 + burst requests pass at once", a.proxied and b.proxied and c.proxied)
  R.check("rate-limit: the next one gets 429 with Retry-After (whole seconds, ≥ 1)", d.status == 429 and d.headers["retry-after"] == "1", d.status .. " " .. tostring(d.headers["retry-after"]))
  R.check("rate-limit: another client has its own bucket", go("rl", { ip = "192.0.2.99" }).proxied)
  T.clock = T.clock + 1
  R.check("rate-limit: one more request after 1/rate seconds", go("rl").proxied and go("rl").status == 429)
  go("minute")
  local m = go("minute")
  R.check("rate-limit: per minute, Retry-After counts the seconds left", m.status == 429 and m.headers["retry-after"] == "60", tostring(m.headers["retry-after"]))
  T.clock = T.clock + 30.5
  m = go("minute")
  R.check("rate-limit: …and shrinks as time passes", m.status == 429 and m.headers["retry-after"] == "30", tostring(m.headers["retry-after"]))
  local dict = T.ngx.shared.portico_limits
  local ttl = dict:ttl("minute:i:192.0.2.10")
  R.check("rate-limit: counters expire once the bucket has drained", ttl and ttl > 0 and ttl <= 61, tostring(ttl))
  T.clock = T.clock + 120
  R.check("rate-limit: …and are gone afterwards", dict:get("minute:i:192.0.2.10") == nil and go("minute").proxied)
  local h1 = go("hdr", { headers = { ["x-tenant"] = "t1" } })
  local h1b = go("hdr", { headers = { ["x-tenant"] = "t1" } })
  local h2 = go("hdr", { headers = { ["x-tenant"] = "t2" } })
  R.check("rate-limit: by=header counts per header value, with the configured status", h1.proxied and h1b.status == 503 and h2.proxied)
  R.check("rate-limit: …a request without the header is counted by client address", go("hdr").proxied and go("hdr").status == 503 and go("hdr", { ip = "192.0.2.50" }).proxied)
  local e1, e2 = go("ex", { ip = "198.51.100.7" }), go("ex", { ip = "198.51.100.7" })
  local o1, o2 = go("ex", { ip = "203.0.113.9" }), go("ex", { ip = "203.0.113.9" })
  R.check("rate-limit: exempt clients (limit-whitelist) are never limited, others are", e1.proxied and e2.proxied and o1.proxied and o2.status == 503, tostring(o2.status))
end

do -- by=consumer, and a consumer's own rate-limit replacing the route's
  local cons = { team = { consumers = {
    { name = "free", username = "free", keys = { sha256_hex("free-key") }, basic = {}, plugins = {} },
    { name = "gold", username = "gold", keys = { sha256_hex("gold-key") }, basic = {}, plugins = { "gold-limit", "gold-headers" } },
  } } }
  local T, engine = setup({
    ka = plugin("key-auth", { namespace = "team", header = "apikey", hideCredentials = true }),
    rl = plugin("rate-limit", { rate = 1, periodSeconds = 60, burst = 0, by = "consumer", status = 429, key = "rl" }),
    ["gold-limit"] = plugin("rate-limit", { rate = 1, periodSeconds = 60, burst = 4, by = "consumer", status = 429, key = "gold-limit" }),
    ["gold-headers"] = plugin("response-headers", { set = { { name = "x-tier", value = "gold" } }, add = {}, remove = {} }),
  }, cons)
  local function go(key, ip) return request(T, engine, { plugins = "ka,rl", headers = { apikey = key }, ip = ip }) end
  local f1, f2 = go("free-key", "192.0.2.1"), go("free-key", "192.0.2.2")
  R.check("rate-limit: by=consumer counts one consumer across client addresses", f1.proxied and f2.status == 429)
  local passed = 0
  local last
  for _ = 1, 6 do
    last = go("gold-key")
    if last.proxied then passed = passed + 1 end
  end
  R.check("engine: a consumer's plugin of the same type replaces the route's (gold: 1 + 4 burst)", passed == 5 and last.status == 429, passed)
  R.check("engine: a consumer's plugin of a type the route lacks is added (response header on gold's answers)", last.headers["x-tier"] == "gold")
  R.check("engine: …other consumers keep the route's plugins", f1.headers["x-tier"] == nil)
end

---------------------------------------------------------------------------------------------------------- headers
do
  local T, engine = setup({
    rq = plugin("request-headers", { set = { { name = "x-env", value = "prod $host" } }, add = { { name = "x-tag", value = "b" } }, remove = { "x-drop" } }),
    rs = plugin("response-headers", { set = { { name = "x-frame-options", value = "DENY" } }, add = { { name = "cache-control", value = "no-transform" } }, remove = { "server", "x-powered-by" } }),
    ka = plugin("key-auth", { namespace = "team", header = "apikey", hideCredentials = true }),
  }, consumers)
  local r = request(T, engine, { plugins = "rq,rs", headers = { ["x-env"] = "dev", ["x-tag"] = "a", ["x-drop"] = "1" },
    upstream = { headers = { ["x-powered-by"] = "php", ["cache-control"] = "max-age=60", ["x-frame-options"] = "SAMEORIGIN" } } })
  R.check("request-headers: set replaces with the literal value (no variables)", r.req["x-env"] == "prod $host")
  R.check("request-headers: add keeps the existing value", type(r.req["x-tag"]) == "table" and r.req["x-tag"][1] == "a" and r.req["x-tag"][2] == "b")
  R.check("request-headers: remove", r.req["x-drop"] == nil)
  R.check("response-headers: set, add and remove on the backend's response",
    r.headers["x-frame-options"] == "DENY" and r.headers["x-powered-by"] == nil and type(r.headers["cache-control"]) == "table"
    and r.headers["cache-control"][1] == "max-age=60" and r.headers["cache-control"][2] == "no-transform")
  r = request(T, engine, { plugins = "ka,rs" })
  R.check("response-headers: also on Portico's own answers (401)", r.status == 401 and r.headers["x-frame-options"] == "DENY")
end

--------------------------------------------------------------------------------------------------------- redirect
do
  local T, engine = setup({
    full = plugin("redirect", { status = 301, scheme = "https", host = "new.example", port = 8443, path = "/landing", keepQuery = true }),
    pre = plugin("redirect", { status = 308, prefix = { from = "/old", to = "/new" }, keepQuery = true }),
    esc = plugin("redirect", { status = 301, path = "/a%20b", keepQuery = false }),
    noq = plugin("redirect", { status = 302, host = "b.example", keepQuery = false }),
    ownq = plugin("redirect", { status = 301, scheme = "https", host = "c.example", path = "/land", query = "utm=a%20b&x=1", keepQuery = false }),
    bothq = plugin("redirect", { status = 301, path = "/land", query = "utm=a", keepQuery = true }),
  })
  local r = request(T, engine, { plugins = "full", uri = "/x", query = "a=1&b=$host" })
  R.check("redirect: status and an absolute Location from scheme/host/port/path, query kept",
    r.status == 301 and not r.proxied and r.headers["location"] == "https://new.example:8443/landing?a=1&b=$host", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "pre", uri = "/old/a b/ü", query = "q=1" })
  R.check("redirect: a prefix is replaced; the Location is a path only when no scheme/host/port is set (percent-encoded)",
    r.status == 308 and r.headers["location"] == "/new/a%20b/%C3%BC?q=1", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "esc", uri = "/x" })
  R.check("redirect: a configured path is written as it is (already a URL path)", r.headers["location"] == "/a%20b", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "pre", uri = "/older" })
  R.check("redirect: a path the prefix does not match (element-wise) is not redirected", r.proxied)
  r = request(T, engine, { plugins = "noq", uri = "/p", query = "x=1", scheme = "https" })
  R.check("redirect: host only keeps the request's scheme and path, drops the query when keepQuery is false",
    r.status == 302 and r.headers["location"] == "https://b.example/p", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "ownq", uri = "/p", query = "client=1" })
  R.check("redirect: a query of its own replaces the client's (permanent-redirect with a query)",
    r.status == 301 and r.headers["location"] == "https://c.example/land?utm=a%20b&x=1", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "bothq", uri = "/p", query = "client=1" })
  R.check("redirect: its query first, then the client's with keepQuery", r.headers["location"] == "/land?utm=a&client=1", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "pre", uri = "/old", query = "a=\r\nSet-Cookie:x" })
  R.check("redirect: a query cannot break the Location header", r.headers["location"] == "/new?a=%0D%0ASet-Cookie:x", tostring(r.headers["location"]))
end

---------------------------------------------------------------------------------------------------------- rewrite
do
  local T, engine = setup({
    path = plugin("rewrite", { path = "/fixed" }),
    esc = plugin("rewrite", { prefix = { from = "/a%20b", to = "/c%2Bd" } }),
    pre = plugin("rewrite", { prefix = { from = "/api", to = "/" } }),
    rx = plugin("rewrite", { regex = { pattern = "^/v([0-9]+)/(.*)$", replacement = "/api/$2/v$1" } }),
    host = plugin("rewrite", { host = "internal.svc" }),
    hh = plugin("rewrite", { hostHeader = true }),
  })
  request(T, engine, { plugins = "path", uri = "/a/b" })
  R.check("rewrite: path replaces the whole path", T.new_uri == "/fixed")
  request(T, engine, { plugins = "esc", uri = "/a b/x+y" })
  R.check("rewrite: configured paths are URL paths (%-escapes decoded into $uri's form)", T.new_uri == "/c+d/x+y", tostring(T.new_uri))
  request(T, engine, { plugins = "pre", uri = "/api/users" })
  R.check("rewrite: prefix replaces the leading element(s)", T.new_uri == "/users", tostring(T.new_uri))
  request(T, engine, { plugins = "pre", uri = "/apiary" })
  R.check("rewrite: …element-wise (no match, path kept)", T.new_uri == nil)
  request(T, engine, { plugins = "rx", uri = "/v2/items" })
  R.check("rewrite: regex with $1.. captures", T.new_uri == "/api/items/v2", tostring(T.new_uri))
  local r = request(T, engine, { plugins = "rx", uri = "/other" })
  R.check("rewrite: regex without a match leaves the path", T.new_uri == nil and r.proxied)
  request(T, engine, { plugins = "host", uri = "/" })
  R.check("rewrite: host sets $portico_upstream_host", T.ngx.var.portico_upstream_host == "internal.svc" and T.new_uri == nil)
  R.check("rewrite: …and the Host map's value itself ($portico_proxy_host, taken by nginx as evaluated)", T.ngx.var.portico_proxy_host == "internal.svc", tostring(T.ngx.var.portico_proxy_host))
  request(T, engine, { plugins = "hh", uri = "/", host = "a.example", http_host = "a.example:8443" })
  R.check("rewrite: hostHeader sends the client's Host header as sent, port included (upstream-vhost: $http_host)",
    T.ngx.var.portico_upstream_host == "a.example:8443" and T.ngx.var.portico_proxy_host == "a.example:8443", tostring(T.ngx.var.portico_proxy_host))
end

do -- rewrite-target: nginx's `rewrite "(?i)<path>" <target> break` (ingress-nginx examples/rewrite)
  local T, engine = setup({
    rt = plugin("rewrite", { regex = { pattern = "/something/?(.*)", replacement = "/$1", nginx = true } }),
    q = plugin("rewrite", { regex = { pattern = "/search/(.*)", replacement = "/find?q=$1", nginx = true } }),
    drop = plugin("rewrite", { regex = { pattern = "/s/(.*)", replacement = "/$1?", nginx = true } }),
    root = plugin("rewrite", { regex = { pattern = "/app", replacement = "/", nginx = true } }),
  })
  request(T, engine, { plugins = "rt", uri = "/something/new" })
  R.check("rewrite-target: the whole path becomes the target with the path regex's captures (/something/new → /new)", T.new_uri == "/new", tostring(T.new_uri))
  request(T, engine, { plugins = "rt", uri = "/something" })
  R.check("rewrite-target: an empty capture gives \"/\"", T.new_uri == "/", tostring(T.new_uri))
  request(T, engine, { plugins = "rt", uri = "/SOMETHING/x" })
  R.check("rewrite-target: the path regex is case-insensitive (nginx's (?i))", T.new_uri == "/x", tostring(T.new_uri))
  request(T, engine, { plugins = "root", uri = "/app/deep/path" })
  R.check("rewrite-target \"/\": everything under the path reaches the backend as \"/\" (nginx replaces the whole URI)", T.new_uri == "/", tostring(T.new_uri))
  request(T, engine, { plugins = "q", uri = "/search/cats", query = "page=2" })
  R.check("rewrite-target: a query in the target comes first, the client's after it (nginx)", T.new_uri == "/find" and T.args == "q=cats&page=2", tostring(T.new_uri) .. " " .. tostring(T.args))
  request(T, engine, { plugins = "drop", uri = "/s/a", query = "page=2" })
  R.check("rewrite-target: a final \"?\" drops the client's query (nginx)", T.new_uri == "/a" and T.args == "", tostring(T.args))
  request(T, engine, { plugins = "rt", uri = "/other" })
  R.check("rewrite-target: no match keeps the path", T.new_uri == nil)
end

do -- app-root and from-to-www-redirect answers
  local T, engine = setup({
    approot = plugin("redirect", { status = 302, path = "/app1", keepQuery = false, hostFromRequest = true }),
    www = plugin("redirect", { status = 308, host = "foo.com", keepQuery = true, requestUri = true, stripTrailingSlash = true }),
  })
  local r = request(T, engine, { plugins = "approot", uri = "/", query = "x=1", host = "approot.bar.com" })
  R.check("app-root: 302 to <scheme>://<host><app-root>, no query (ingress-nginx's return 302 $scheme://$http_host<app-root>)",
    r.status == 302 and r.headers["location"] == "http://approot.bar.com/app1", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "www", uri = "/a/b/", query = "q=1", host = "www.foo.com", scheme = "https" })
  R.check("from-to-www-redirect: 308 to the other name, same scheme, request URI and query", r.status == 308 and r.headers["location"] == "https://foo.com/a/b/?q=1", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "www", uri = "/a/b/", host = "www.foo.com" })
  R.check("from-to-www-redirect: the last \"/\" of the request URI is dropped (ingress-nginx)", r.headers["location"] == "http://foo.com/a/b", tostring(r.headers["location"]))
  r = request(T, engine, { plugins = "www", uri = "/", host = "www.foo.com" })
  R.check("from-to-www-redirect: \"/\" becomes the bare host (ingress-nginx)", r.headers["location"] == "http://foo.com", tostring(r.headers["location"]))
end

do -- satisfy: any (ingress-nginx): the allowlist OR basic auth lets a request in; when both refuse, the 401
  local users = { { username = "ann", hash = "$apr1$Xy1.z/$sGfCQmdkAWdv/qehfFZVh1" } }
  local T, engine = setup({
    ip = plugin("ip-restriction", { allow = { "198.51.100.0/24" }, status = 403, satisfyAny = true }),
    ba = plugin("basic-auth", { namespace = "team", realm = "Own", hideCredentials = false, users = users, satisfyAny = true }),
    ip_all = plugin("ip-restriction", { allow = { "198.51.100.0/24" }, status = 403 }),
    ba_all = plugin("basic-auth", { namespace = "team", realm = "Own", hideCredentials = false, users = users }),
    ip2 = plugin("ip-restriction", { allow = { "198.51.100.0/24" }, status = 403, satisfyAny = true }),
    deny = plugin("ip-restriction", { deny = { "192.0.2.0/24" }, status = 403, satisfyAny = true }),
  }, {})
  local good = { authorization = "Basic " .. mock.b64enc("ann:open-sesame") }
  local bad = { authorization = "Basic " .. mock.b64enc("ann:nope") }
  local r = request(T, engine, { plugins = "ip,ba", ip = "198.51.100.9" })
  R.check("satisfy any: an allowed address needs no password", r.proxied, r.status)
  r = request(T, engine, { plugins = "ip,ba", ip = "192.0.2.50", headers = good })
  R.check("satisfy any: a good password from anywhere passes", r.proxied, r.status)
  r = request(T, engine, { plugins = "ip,ba", ip = "192.0.2.50", headers = bad })
  R.check("satisfy any: both refuse → 401 with the basic-auth challenge (a 401 wins over the 403)",
    r.status == 401 and tostring(r.headers["www-authenticate"]):find("Own", 1, true) ~= nil, r.status .. " " .. tostring(r.headers["www-authenticate"]))
  r = request(T, engine, { plugins = "ip_all,ba_all", ip = "198.51.100.9" })
  R.check("satisfy all (default): an allowed address still needs the password", r.status == 401, r.status)
  r = request(T, engine, { plugins = "ip_all,ba_all", ip = "192.0.2.50", headers = good })
  R.check("satisfy all: a good password from outside the allowlist → 403", r.status == 403, r.status)
  r = request(T, engine, { plugins = "ip2,deny", ip = "192.0.2.50" })
  R.check("satisfy any with only 403 refusals → 403", r.status == 403, r.status)
  r = request(T, engine, { plugins = "ip2", ip = "192.0.2.50" })
  R.check("satisfy any with a single access plugin behaves as satisfy all", r.status == 403, r.status)
  -- The router's synchronous run: the refusal recorded for @portico_deny is the final one, not the first.
  local function sync(ids, ip, headers)
    T.ngx.ctx = {}
    for k in pairs(T.ngx.var) do T.ngx.var[k] = nil end
    T.headers = {}
    for k, v in pairs(headers or {}) do T.headers[k:lower()] = v end
    T.ngx.var.remote_addr = ip
    local jump = engine.run_sync(ids)
    return jump, T.ngx.var.portico_deny
  end
  local jump, deny = sync("ip,ba", "198.51.100.9")
  R.check("satisfy any (router's run): the allowlisted address is proxied", jump == nil, tostring(jump))
  jump, deny = sync("ip,ba", "192.0.2.50", bad)
  R.check("satisfy any (router's run): both refuse → 401 with the challenge recorded",
    jump == "@portico_deny" and deny:match("^401\n") ~= nil and deny:find("WWW-Authenticate", 1, true) ~= nil, tostring(deny))
  jump = sync("ip,ba", "192.0.2.50", good)
  R.check("satisfy any (router's run): a good password passes", jump == nil, tostring(jump))
end

do -- conn-limit (limit-connections): requests in progress per client address, released in the log phase
  local T, engine = setup({
    c = plugin("conn-limit", { limit = 2, status = 503, key = "c" }),
    cx = plugin("conn-limit", { limit = 1, status = 503, key = "cx", exempt = { "198.51.100.0/24" } }),
  }, {})
  local dict = T.ngx.shared.portico_limits
  -- request() resets the variables: each "request" keeps its slot key to release it later, as its own log phase would.
  local function begin(ids, ip)
    local r = request(T, engine, { plugins = ids, ip = ip })
    return r, T.ngx.var.portico_conn_release
  end
  local function finish(key)
    T.ngx.var.portico_conn_release = key
    engine.log()
  end
  local r1, k1 = begin("c", "192.0.2.1")
  local r2, k2 = begin("c", "192.0.2.1")
  local r3, k3 = begin("c", "192.0.2.1")
  R.check("conn-limit: two requests in progress pass, the third gets 503", r1.proxied and r2.proxied and r3.status == 503 and (k3 == nil or k3 == ""), r3.status)
  local other = begin("c", "192.0.2.2")
  R.check("conn-limit: another address has its own count", other.proxied)
  finish(k1)
  local r4, k4 = begin("c", "192.0.2.1")
  R.check("conn-limit: a finished request frees its slot", r4.proxied, r4.status)
  finish(k2); finish(k4)
  R.check("conn-limit: released counters are removed", dict:get(k1) == nil, tostring(dict:get(k1)))
  finish(k4)
  R.check("conn-limit: a second release of a request is a no-op (the variable is cleared)", dict:get(k4) == nil and T.ngx.var.portico_conn_release == "")
  local e1 = begin("cx", "198.51.100.7")
  local e2 = begin("cx", "198.51.100.7")
  R.check("conn-limit: limit-allowlist addresses are not limited", e1.proxied and e2.proxied)
  -- The router's run: the conn-limit asks for a location with a log handler (its id among the filters).
  T.ngx.ctx = {}
  for k in pairs(T.ngx.var) do T.ngx.var[k] = nil end
  T.ngx.var.remote_addr = "192.0.2.9"
  local jump, filters = engine.run_sync("c")
  R.check("conn-limit (router's run): proxied through a location with a log handler (filters name it)", jump == nil and filters == "c", tostring(filters))
  R.check("conn-limit (router's run): the slot is held in $portico_conn_release", (T.ngx.var.portico_conn_release or ""):find(":c:192.0.2.9", 1, true) ~= nil)
  engine.release()
  R.check("conn-limit: release() (the refusal location's log phase) gives the slot back", dict:get("c:c:192.0.2.9") == nil)
end

R.done()
