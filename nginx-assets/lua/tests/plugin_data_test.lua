-- Plugins and consumers as data, with a mocked ngx: the store's "p:"/"k:" kinds (one version with backends and
-- routes, change log, lazy decode, listeners), the configuration API (POST /portico/data, GET /portico/plugins and
-- /portico/consumers without credentials), and validate.lua's checks of plugin instances, consumer sets and the
-- route fields routes may now carry.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local HEX = string.rep("ab", 32)
local function consumer_set(extra)
  local c = { name = "alice", username = "alice", keys = { HEX }, basic = { { username = "alice", hash = "sha256$00ff$" .. HEX } }, plugins = {} }
  for k, v in pairs(extra or {}) do c[k] = v end
  return { consumers = { c } }
end
local function ka(ns) return { name = "team/ka", type = "key-auth", namespace = ns or "team", header = "apikey", hideCredentials = true } end

------------------------------------------------------------------------------------------------------------ store
do
  local T = mock.fresh()
  local store = require("portico.store")
  local seen = {}
  store.on_plugins(function(id, present) seen[#seen + 1] = "p:" .. id .. ":" .. tostring(present) end)
  store.on_consumers(function(ns, present) seen[#seen + 1] = "k:" .. ns .. ":" .. tostring(present) end)
  local v = store.apply_all({
    b = { upsert = { ns_web_80 = { endpoints = { { address = "10.0.0.1", port = 80, weight = 1 } } } } },
    p = { upsert = { team_ka = ka() } },
    k = { upsert = { team = consumer_set() } },
    r = { upsert = { ["a.example"] = { rules = { { path = "/", match = "prefix", route = { backendId = "ns_web_80", plugins = { "team_ka" } } } } } } },
  })
  R.check("store: backends, plugins, consumers and routes are published as one version", v == 1 and store.version() == 1, v)
  local log = T.ngx.shared.portico_data:get("c:1")
  R.check("store: …and the change log names the new kinds", log:find("p:team_ka", 1, true) and log:find("k:team", 1, true), log)
  store.sync()
  R.check("store: a worker's sync reports plugin and consumer changes", table.concat(seen, " "):find("p:team_ka:true", 1, true) and table.concat(seen, " "):find("k:team:true", 1, true), table.concat(seen, " "))
  local p = store.get_plugin("team_ka")
  R.check("store: get_plugin decodes the instance once and keeps it", p and p.type == "key-auth" and store.get_plugin("team_ka") == p)
  R.check("store: get_consumers returns a namespace's set", store.get_consumers("team").consumers[1].name == "alice")
  R.check("store: unknown ids are nil", store.get_plugin("nope") == nil and store.get_consumers("nope") == nil)
  seen = {}
  store.apply_all({ p = { upsert = { team_ka = ka("other") } } })
  store.sync()
  R.check("store: a changed plugin is decoded again (only it)", store.get_plugin("team_ka").namespace == "other" and #seen == 1, table.concat(seen, " "))
  store.apply_all({ p = { remove = { "team_ka" } }, k = { remove = { "team" } } })
  store.sync()
  R.check("store: removals reach the worker", store.get_plugin("team_ka") == nil and store.get_consumers("team") == nil)
  R.check("store: dump lists plugins and consumers", next(store.dump("p")) == nil and next(store.dump("k")) == nil)
end

do -- a full re-read (start, reload, a worker far behind) knows the new kinds too
  local T = mock.fresh()
  local store = require("portico.store")
  store.apply_all({ p = { upsert = { x = ka() } }, k = { upsert = { team = consumer_set() } } })
  T.ngx.shared.portico_data:delete("c:1")
  store.sync()
  R.check("store: a full re-read finds plugins and consumers", store.get_plugin("x") ~= nil and store.get_consumers("team") ~= nil)
end

-------------------------------------------------------------------------------------------------------------- API
local T = mock.fresh()
require("portico.init").init({ checksum = "abc", unavailable = "unix:/run/u.sock" })
local api = require("portico.api")
local store = require("portico.store")

local function call(method, uri, body)
  T.said = {}
  T.exited = nil
  T.ngx.status = 0
  T.method = method
  T.body = body and cjson.encode(body) or nil
  T.ngx.var.uri = uri
  T.ngx.var.remote_addr = "unix:"
  api.handle()
  return T.ngx.status, cjson.decode(T.said[1] or "null")
end

do
  local st, b = call("POST", "/portico/data", {
    plugins = { upsert = { team_ka = ka(), team_rl = { name = "team/rl", type = "rate-limit", rate = 10, periodSeconds = 1, burst = 5, by = "consumer", status = 429, key = "team_rl" } } },
    consumers = { upsert = { team = consumer_set({ plugins = { "team_rl" } }) } },
  })
  R.check("API: POST /portico/data stores plugins and consumers", st == 200 and b.version == 1, st .. " " .. cjson.encode(b))
  st, b = call("GET", "/portico/plugins")
  R.check("API: GET /portico/plugins lists the instances", st == 200 and b.team_ka.type == "key-auth" and b.team_rl.rate == 10)
  st, b = call("GET", "/portico/consumers")
  local c = b and b.team and b.team.consumers[1]
  R.check("API: GET /portico/consumers lists names, user names, counts and plugins",
    st == 200 and c and c.name == "alice" and c.username == "alice" and c.keys == 1 and c.basic[1] == "alice" and c.plugins[1] == "team_rl", cjson.encode(b))
  local raw = T.said[1]
  R.check("API: …never a key or password hash", not raw:find(HEX, 1, true) and not raw:find("sha256", 1, true), raw)
  st = call("POST", "/portico/data", { plugins = { remove = { "team_ka" } }, consumers = { remove = { "team" } } })
  st, b = call("GET", "/portico/plugins")
  R.check("API: removals", b.team_ka == nil and b.team_rl ~= nil)
end

do -- refused bodies: nothing stored
  local before = store.version()
  local function refused(name, body, pattern)
    local st, b = call("POST", "/portico/data", body)
    R.check("API: " .. name .. " → 400", st == 400 and (not pattern or (b.error or ""):find(pattern, 1, true)), st .. " " .. cjson.encode(b))
  end
  refused("plugin id with a slash", { plugins = { upsert = { ["a/b"] = ka() } } }, "invalid plugin id")
  refused("unknown plugin type", { plugins = { upsert = { x = { name = "n", type = "lua-code" } } } }, "unknown type")
  refused("plugin without a name", { plugins = { upsert = { x = { type = "cors", allowOrigins = { "*" } } } } }, "invalid name")
  refused("consumer namespace that is not a DNS label", { consumers = { upsert = { ["Team_1"] = consumer_set() } } }, "invalid namespace")
  refused("a plaintext password", { consumers = { upsert = { team = consumer_set({ basic = { { username = "a", hash = "hunter2" } } }) } } }, "unsupported password hash")
  refused("a key that is not a SHA-256 hex digest", { consumers = { upsert = { team = consumer_set({ keys = { "secret-key" } }) } } }, "keys must be")
  refused("a route naming a malformed plugin id", { routes = { upsert = { ["a.example"] = { rules = { { path = "/", match = "prefix", route = { backendId = "b", plugins = { "Bad Id" } } } } } } } }, "invalid plugin id")
  R.check("API: …and nothing refused was stored", store.version() == before)
end

--------------------------------------------------------------------------------------------------------- validate
local validate = require("portico.validate")
local function plugin_err(p)
  p.name = p.name or "ns/p"
  return validate.plugin("p1", p)
end
local function ok(name, p) local e = plugin_err(p); R.check("validate: " .. name, e == nil, e) end
local function bad(name, p, pattern)
  local e = plugin_err(p)
  R.check("validate: " .. name, e ~= nil and (not pattern or e:find(pattern, 1, true)), tostring(e))
end

ok("ip-restriction with IPv4/IPv6 CIDRs", { type = "ip-restriction", allow = { "10.0.0.0/8", "2001:db8::/32", "192.0.2.1" }, deny = { "::1" }, status = 403 })
bad("ip-restriction with a bad CIDR", { type = "ip-restriction", deny = { "10.0.0.0/40" }, status = 403 }, "deny")
bad("ip-restriction with a 200 status", { type = "ip-restriction", deny = { "10.0.0.0/8" }, status = 200 }, "status")
ok("cors", { type = "cors", allowOrigins = { "https://a.example", "https://*.example.com", "*", "http://localhost:3000" }, allowMethods = { "GET" }, allowHeaders = { "x-a" }, exposeHeaders = {}, allowCredentials = false, maxAgeSeconds = 86400 })
bad("cors with an origin carrying a path", { type = "cors", allowOrigins = { "https://a.example/x" }, allowMethods = {}, allowHeaders = {}, exposeHeaders = {}, allowCredentials = false, maxAgeSeconds = 0 }, "allowOrigins")
bad("cors with a header name containing a space", { type = "cors", allowOrigins = { "*" }, allowHeaders = { "x a" } }, "allowHeaders")
ok("key-auth with a query parameter", { type = "key-auth", namespace = "team", header = "x-api-key", query = "api_key", hideCredentials = true })
bad("key-auth with an upper-case header", { type = "key-auth", namespace = "team", header = "X-Api-Key", hideCredentials = true }, "header")
ok("basic-auth", { type = "basic-auth", namespace = "team", realm = "Team area", hideCredentials = false })
bad("basic-auth with a quote in the realm", { type = "basic-auth", namespace = "team", realm = 'a"b', hideCredentials = false }, "realm")
ok("external-auth", { type = "external-auth", backendId = "team_auth_80", path = "/verify", method = "GET", forwardHeaders = {}, upstreamHeaders = { "x-user" }, clientHeaders = { "www-authenticate" }, timeoutMs = 5000 })
bad("external-auth copying Content-Length upstream", { type = "external-auth", backendId = "team_auth_80", path = "/v", upstreamHeaders = { "content-length" } }, "cannot be set")
bad("external-auth with a path with a space", { type = "external-auth", backendId = "team_auth_80", path = "/a b" }, "path")
do -- external-auth in ingress-nginx mode (auth-url annotations)
  local function nx(fields)
    local n = { scheme = "https", host = "auth.example.com", alwaysSetCookie = false, timeouts = { connect = 5, send = 60, read = 60 },
      signin = { "https://login.example/start?rd=", { v = "rd" } }, requestRedirect = { { v = "scheme" }, "://", { v = "host" } },
      cache = { key = { { v = "http_authorization" }, ":", { v = "cookie_session" } }, ttl = { ["200"] = 300, any = 60 } } }
    for k, v in pairs(fields) do n[k] = v end
    return { type = "external-auth", backendId = "extauth.auth.example.com.443", path = "/check", upstreamHeaders = { "x-user" }, ingressNginx = n }
  end
  ok("external-auth ingress-nginx mode", nx({}))
  bad("auth-url: a scheme other than http(s)", nx({ scheme = "gopher" }), "scheme")
  bad("auth-url: a host with a space", nx({ host = "a b" }), "host")
  bad("auth-url: a sign-in template reading a variable off the allowlist", nx({ signin = { "https://", { v = "http_x_target" } } }), "signin")
  bad("auth-url: a sign-in literal with a newline", nx({ signin = { "https://a\r\nSet-Cookie: x" } }), "signin")
  bad("auth-url: a cache key reading an unknown variable", nx({ cache = { key = { { v = "document_root" } }, ttl = { ["200"] = 1 } } }), "cache.key")
  bad("auth-url: a cache ttl for a non-status", nx({ cache = { key = { { v = "remote_user" } }, ttl = { ["2000"] = 1 } } }), "cache.ttl")
  bad("auth-url: no timeouts", nx({ timeouts = false }), "timeouts")
  bad("auth-url: a method with a space", nx({ method = "GET /x" }), "method")
  ok("auth-proxy-set-headers", nx({ setHeaders = { { name = "x-team", value = { "blue ", { v = "remote_addr" } } }, { name = "x-empty", value = { "" } } } }))
  bad("auth-proxy-set-headers: Host", nx({ setHeaders = { { name = "host", value = { "evil" } } } }), "setHeaders name")
  bad("auth-proxy-set-headers: CR/LF in text", nx({ setHeaders = { { name = "x-a", value = { "a\r\nb: c" } } } }), "setHeaders value")
  bad("auth-proxy-set-headers: a variable name with a space", nx({ setHeaders = { { name = "x-a", value = { { v = "remote addr" } } } } }), "setHeaders value")
end
ok("rate-limit", { type = "rate-limit", rate = 100, periodSeconds = 60, burst = 10, by = "header", header = "x-tenant", status = 429, key = "team_rl" })
bad("rate-limit per 10 s", { type = "rate-limit", rate = 1, periodSeconds = 10, burst = 0, by = "ip", status = 429, key = "k" }, "periodSeconds")
bad("rate-limit by header without a header", { type = "rate-limit", rate = 1, periodSeconds = 1, burst = 0, by = "header", status = 429, key = "k" }, "header")
bad("rate-limit without a key", { type = "rate-limit", rate = 1, periodSeconds = 1, burst = 0, by = "ip", status = 429 }, "key")
ok("conn-limit", { type = "conn-limit", limit = 5, status = 503, key = "ing.default.a.conn", exempt = { "198.51.100.0/24" } })
bad("conn-limit of 0", { type = "conn-limit", limit = 0, status = 503, key = "k" }, "limit")
bad("conn-limit with a bad exempt CIDR", { type = "conn-limit", limit = 1, status = 503, key = "k", exempt = { "1.2.3.4/33" } }, "exempt")
ok("satisfyAny on an access plugin", { type = "ip-restriction", allow = { "10.0.0.0/8" }, status = 403, satisfyAny = true })
bad("satisfyAny on a rate limit", { type = "rate-limit", rate = 1, periodSeconds = 1, burst = 0, by = "ip", status = 429, key = "k", satisfyAny = true }, "satisfyAny")
bad("satisfyAny not true", { type = "basic-auth", namespace = "team", realm = "x", hideCredentials = false, satisfyAny = "yes" }, "satisfyAny")
ok("request-headers with an empty value", { type = "request-headers", set = { { name = "x-a", value = "" } }, add = { { name = "x-b", value = "a $b ${c}" } }, remove = { "x-c" } })
bad("request-headers with CR/LF in a value", { type = "request-headers", set = { { name = "x-a", value = "a\r\nb: c" } }, add = {}, remove = {} }, "invalid set")
bad("request-headers setting Host", { type = "request-headers", set = { { name = "host", value = "x" } } }, "invalid set")
bad("request-headers removing Transfer-Encoding", { type = "request-headers", remove = { "transfer-encoding" } }, "invalid remove")
bad("response-headers setting Content-Length", { type = "response-headers", set = { { name = "content-length", value = "1" } } }, "invalid set")
ok("response-headers", { type = "response-headers", set = { { name = "x-frame-options", value = "DENY" } }, add = {}, remove = { "server" } })
ok("redirect", { type = "redirect", status = 301, scheme = "https", host = "new.example", port = 8443, prefix = { from = "/old", to = "/new" }, keepQuery = true })
bad("redirect with status 200", { type = "redirect", status = 200, keepQuery = true }, "status")
ok("rewrite of the Host to the client's header", { type = "rewrite", hostHeader = true })
bad("rewrite with host and hostHeader", { type = "rewrite", host = "a.example", hostHeader = true }, "exclude")
ok("redirect with a query", { type = "redirect", status = 301, host = "x.example", path = "/land", query = "utm_source=old%20site&a=1", keepQuery = false })
bad("redirect with a query holding a quote", { type = "redirect", status = 301, host = "x.example", query = "a=\"b", keepQuery = false }, "query")
bad("redirect with path and prefix", { type = "redirect", status = 301, path = "/a", prefix = { from = "/b", to = "/c" } }, "exclude")
bad("redirect with a host carrying a path", { type = "redirect", status = 301, host = "a.example/x" }, "host")
ok("rewrite with a regex", { type = "rewrite", regex = { pattern = "^/v([0-9]+)/(.*)$", replacement = "/api/$2/${1}/$$" }, host = "svc.internal" })
bad("rewrite with a regex that does not compile", { type = "rewrite", regex = { pattern = "[unclosed", replacement = "/" } }, "does not compile")
bad("rewrite with an nginx variable in the replacement", { type = "rewrite", regex = { pattern = "^/(.*)$", replacement = "/$host/$1" } }, "replacement")
bad("rewrite with path and prefix", { type = "rewrite", path = "/a", prefix = { from = "/b", to = "/c" } }, "exclude")
bad("rewrite with nothing to do", { type = "rewrite" }, "nothing")

do
  local function cs(c) return validate.consumer_set("team", { consumers = { c } }) end
  local base = { name = "alice", username = "alice@team", keys = { HEX }, basic = {}, plugins = { "team_rl" } }
  R.check("validate: a consumer set", cs(base) == nil, cs(base))
  local hashes = {
    "sha256$0123456789abcdef$" .. HEX,
    "{SHA}xO2etOilyqtV8o1RvvnmkeBx7QI=",
    "$2b$05$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm",
    "$2a$10$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm",
    "$2y$12$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm",
  }
  local all = true
  for _, h in ipairs(hashes) do
    local c = { name = "a", username = "a", keys = {}, basic = { { username = "u", hash = h } }, plugins = {} }
    if cs(c) ~= nil then all = false; print("# refused " .. h .. ": " .. cs(c)) end
  end
  R.check("validate: the three hash formats are accepted", all)
  local refused = { "sha256$xyz$" .. HEX, "sha256$00$abc", "{SHA}short", "$7$abc$def", "$apr1$only", "$2b$05$short", "plain", "has space 13c" }
  local none = true
  for _, h in ipairs(refused) do
    if cs({ name = "a", username = "a", keys = {}, basic = { { username = "u", hash = h } }, plugins = {} }) == nil then none = false; print("# accepted " .. h) end
  end
  R.check("validate: other hash formats are refused", none)
  R.check("validate: a basic-auth user name with ':' is refused", cs({ name = "a", username = "a", keys = {}, basic = { { username = "a:b", hash = hashes[1] } }, plugins = {} }) ~= nil)
  R.check("validate: an upper-case key digest is refused", cs({ name = "a", username = "a", keys = { HEX:upper() }, basic = {}, plugins = {} }) ~= nil)
  R.check("validate: a user name with CR/LF is refused", cs({ name = "a", username = "a\r\nx: y", keys = {}, basic = {}, plugins = {} }) ~= nil)
end

do -- route fields
  local function hr(rule) return validate.host_routes("a.example", { rules = { rule } }) end
  local function rule(route, conditions)
    local r = { backendId = "ns_web_80", sslRedirect = false }
    for k, v in pairs(route or {}) do r[k] = v end
    return { path = "/", match = "prefix", route = r, conditions = conditions }
  end
  local good = rule({ split = { { backendId = "ns_a_80", weight = 90, plugins = { "team_ka" } }, { backendId = "ns_b_80", weight = 10 } }, plugins = { "team_ka", "team_rl" }, observe = true, websocket = false },
    { methods = { "GET", "POST" }, headers = { { name = "x-env", type = "exact", value = "canary" }, { name = "user-agent", type = "regex", value = "^curl/" } },
      query = { { name = "debug", type = "exact", value = "" } } })
  R.check("validate: a route with split, plugins, observe, websocket and conditions", hr(good) == nil, hr(good))
  R.check("validate: a passthrough host (ssl-passthrough) is true or absent",
    validate.host_routes("a.example", { tls = false, passthrough = true, rules = { good } }) == nil
      and validate.host_routes("a.example", { tls = false, passthrough = false, rules = { good } }) ~= nil
      and validate.host_routes("a.example", { tls = false, passthrough = "yes", rules = { good } }) ~= nil)
  local cases = {
    { "split weight over 1000000 (Gateway API's limit)", rule({ split = { { backendId = "ns_a_80", weight = 1000001 } } }), "weight" },
    { "split with a bad backend id", rule({ split = { { backendId = "A/B", weight = 1 } } }), "split 1" },
    { "empty split", rule({ split = {} }), "split" },
    { "retryAttempts over 10", rule({ retryAttempts = 11 }), "retryAttempts" },
    { "retryAttempts not an integer", rule({ retryAttempts = 1.5 }), "retryAttempts" },
    { "split share with a bad plugin id", rule({ split = { { backendId = "ns_a_80", weight = 1, plugins = { "A B" } } } }), "split 1: plugins" },
    { "split share with plugins not a list", rule({ split = { { backendId = "ns_a_80", weight = 1, plugins = "x" } } }), "split 1: plugins" },
    { "observe false", rule({ observe = false }), "observe" },
    { "websocket true", rule({ websocket = true }), "websocket" },
    { "lower-case method", rule({}, { methods = { "get" } }), "methods" },
    { "header condition with an upper-case name", rule({}, { headers = { { name = "X-Env", type = "exact", value = "a" } } }), "header name" },
    { "condition of unknown type", rule({}, { headers = { { name = "x", type = "prefix", value = "a" } } }), "exact or regex" },
    { "regex condition that does not compile", rule({}, { query = { { name = "q", type = "regex", value = "[x" } } }), "does not compile" },
    { "conditions not an object", rule({}, { "GET" }), "conditions must be an object" },
  }
  for _, c in ipairs(cases) do
    local e = hr(c[2])
    R.check("validate: route " .. c[1] .. " is refused", e ~= nil and e:find(c[3], 1, true), tostring(e))
  end
end

R.done()
