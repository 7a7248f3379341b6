-- Unit tests for portico.router with a mocked ngx: nginx's location semantics (exact, element-wise longest
-- prefix, regexes in order and case-insensitive, exact over regex over prefix), hosts (exact, one-label wildcard,
-- catch-all, no fall-through), answers (404, 503, 413, redirect to HTTPS), directive profiles, per-route
-- variables, incremental compilation and a 10,000-host table.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local function setup(profiles)
  local T = mock.fresh()
  local store = require("portico.store")
  local router = require("portico.router")
  router.configure({ profiles = profiles or {} })
  return T, store, router
end

local function route(backend, extra)
  local r = { source = "Ingress/ns/x", backendId = backend, sslRedirect = false }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end
local function rule(match, path, r) return { match = match, path = path, route = r } end

-- One request: returns the jump target and the variables the router set.
local function req(T, router, host, uri, o)
  o = o or {}
  local v = T.ngx.var -- the router holds on to ngx.var, as in nginx: fill the same table
  for k in pairs(v) do v[k] = nil end
  v.host, v.uri, v.scheme, v.content_length = host, uri, o.scheme or "https", o.content_length
  v.request_method = o.method or "GET"
  for k, x in pairs(o.vars or {}) do v[k] = x end
  v.portico_backend, v.portico_timeouts, v.portico_tls_host, v.portico_plugins, v.portico_filters = "", "", "", "", ""
  -- As nginx calls it (http.hbs): $host and $uri as set_by_lua arguments.
  local jump = router.route(host, uri)
  return jump, T.ngx.var.portico_backend, T.ngx.var
end
local function backend_for(T, router, host, uri)
  local jump, b = req(T, router, host, uri)
  if jump ~= "" then return jump end
  return b
end

do -- set_by_lua's arguments: the router routes by them, not by ngx.var; without them it reads ngx.var
  local T, store, router = setup()
  router.configure({ profiles = {} })
  store.apply_all({ r = { upsert = {
    ["args.example.com"] = { tls = false, rules = { rule("prefix", "/a", route("by-args")) } },
    ["var.example.com"] = { tls = false, rules = { rule("prefix", "/v", route("by-var")) } },
  } } })
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.host, v.uri, v.scheme, v.request_method = "var.example.com", "/v", "http", "GET"
  R.check("the arguments decide the route", router.route("args.example.com", "/a/x") == "" and v.portico_backend == "by-args")
  R.check("no request id is made by the router (the variables module makes $portico_rid when read)", v.portico_rid == nil)
  v.portico_backend = nil
  R.check("without arguments ngx.var is read", router.route() == "" and v.portico_backend == "by-var")
  -- route_set (http.hbs's set_by_lua): the same, with the arguments as set_by_lua hands them to the chunk ("" when
  -- empty: then ngx.var is read, as without arguments).
  v.portico_backend = nil
  R.check("route_set routes by set_by_lua's arguments", router.route_set("args.example.com", "/a/x") == "" and v.portico_backend == "by-args")
  v.portico_backend = nil
  R.check("route_set: an unmatched path is unmatched", router.route_set("args.example.com", "/nothing") == "@portico_unmatched" and v.portico_backend == nil)
  v.portico_backend = nil
  R.check("route_set: empty arguments are none (ngx.var is read)", router.route_set("", "") == "" and v.portico_backend == "by-var")
  v.portico_backend = nil
  R.check("route_traced_set routes by the same arguments", router.route_traced_set("args.example.com", "/a") == "" and v.portico_backend == "by-args")
end

do -- Ingress conformance: Exact and Prefix on one host
  local T, store, router = setup()
  store.apply_all({ r = { upsert = { ["a.example.com"] = { tls = false, rules = {
    rule("exact", "/foo", route("exact-foo")),
    rule("exact", "/bar/", route("exact-bar-slash")),
    rule("prefix", "/foo/bar", route("prefix-foo-bar")),
    rule("prefix", "/foo", route("prefix-foo")),
    rule("prefix", "/", route("root")),
  } } } } })
  R.check("Exact matches only itself", backend_for(T, router, "a.example.com", "/foo") == "exact-foo")
  R.check("Prefix is element-wise: /foo/ matches /foo", backend_for(T, router, "a.example.com", "/foo/") == "prefix-foo")
  R.check("Prefix is element-wise: /foobar does not match /foo", backend_for(T, router, "a.example.com", "/foobar") == "root")
  R.check("longest prefix wins", backend_for(T, router, "a.example.com", "/foo/bar/baz") == "prefix-foo-bar")
  R.check("/foo/barista is not under /foo/bar", backend_for(T, router, "a.example.com", "/foo/barista") == "prefix-foo")
  R.check("matching is case-sensitive", backend_for(T, router, "a.example.com", "/FOO") == "root")
  R.check("Exact /bar/ does not answer /bar (no auto-redirect)", backend_for(T, router, "a.example.com", "/bar") == "root")
  R.check("Exact /bar/ answers /bar/", backend_for(T, router, "a.example.com", "/bar/") == "exact-bar-slash")
end

do -- a host without "/" answers 404 for other paths and never falls through to the catch-all
  local T, store, router = setup()
  store.apply_all({ r = { upsert = {
    ["a.example.com"] = { rules = { rule("prefix", "/api", route("api")) } },
    ["_"] = { rules = { rule("prefix", "/", route("catch-all")) } },
  } } })
  R.check("unmatched path on a known host is 404", backend_for(T, router, "a.example.com", "/other") == "@portico_unmatched")
  R.check("unknown host goes to the catch-all", backend_for(T, router, "zzz.example.com", "/other") == "catch-all")
  store.apply_all({ r = { remove = { "_" } } })
  R.check("unknown host without a catch-all is 404", backend_for(T, router, "zzz.example.com", "/") == "@portico_unmatched")
end

do -- wildcard hosts match exactly one label; an exact host wins over the wildcard
  local T, store, router = setup()
  store.apply_all({ r = { upsert = {
    ["*.example.com"] = { rules = { rule("prefix", "/", route("wild")) } },
    ["a.example.com"] = { rules = { rule("prefix", "/", route("exact-host")) } },
  } } })
  R.check("one label matches the wildcard", backend_for(T, router, "b.example.com", "/") == "wild")
  R.check("two labels do not", backend_for(T, router, "c.b.example.com", "/") == "@portico_unmatched")
  R.check("the bare parent does not", backend_for(T, router, "example.com", "/") == "@portico_unmatched")
  R.check("exact host wins over wildcard", backend_for(T, router, "a.example.com", "/") == "exact-host")
end

do -- regexes: tried in order, case-insensitive, win over prefixes, lose to exact
  local T, store, router = setup()
  store.apply_all({ r = { upsert = { ["r.example.com"] = { rules = {
    rule("exact", "/v1/items", route("exact")),
    rule("prefix", "/v1", route("prefix")),
    rule("regex", "/v[0-9]+/items", route("first-regex")),
    rule("regex", "/v1/.*", route("second-regex")),
  } } } } })
  R.check("exact beats regex", backend_for(T, router, "r.example.com", "/v1/items") == "exact")
  R.check("the first matching regex wins", backend_for(T, router, "r.example.com", "/v2/items/9") == "first-regex")
  R.check("a later regex wins when the first does not match", backend_for(T, router, "r.example.com", "/v1/other") == "second-regex")
  R.check("regexes are case-insensitive (ingress-nginx ~*)", backend_for(T, router, "r.example.com", "/V3/ITEMS") == "first-regex")
  R.check("prefix when no regex matches", backend_for(T, router, "r.example.com", "/v1") == "prefix")
end

do -- answers and per-route variables
  local T, store, router = setup({ "p_abc" })
  store.apply_all({ r = { upsert = { ["t.example.com"] = { tls = true, rules = {
    rule("prefix", "/closed", route(nil, { action = "unavailable", closedReason = "auth-url" })),
    rule("exact", "/nf", route(nil, { action = "not_found" })),
    rule("prefix", "/secure", route("web", { sslRedirect = true })),
    rule("prefix", "/slow", route("web", { timeouts = { connect = 5, send = 60, read = 300 } })),
    rule("prefix", "/upload", route("web", { profile = "p_abc", maxBodyBytes = 100 })),
    rule("prefix", "/unknown-profile", route("web", { profile = "p_zzz", maxBodyBytes = 100 })),
    rule("prefix", "/", route("web")),
  } } } } })
  local jump, b = req(T, router, "t.example.com", "/closed/x")
  R.check("fail-closed route answers 503 without a backend", jump == "@portico_503" and b == "", jump)
  R.check("not_found route answers 404", (req(T, router, "t.example.com", "/nf")) == "@portico_404")
  R.check("ssl-redirect over plain HTTP", (req(T, router, "t.example.com", "/secure", { scheme = "http" })) == "@portico_https")
  jump, b = req(T, router, "t.example.com", "/secure", { scheme = "https" })
  R.check("ssl-redirect route over HTTPS is proxied", jump == "" and b == "web")
  -- Behind a TLS-terminating load balancer: the scheme the client used ($portico_forwarded_proto, a trusted peer's
  -- X-Forwarded-Proto) decides, not nginx's own (ingress-nginx's $pass_access_scheme).
  jump, b = req(T, router, "t.example.com", "/secure", { scheme = "http", vars = { portico_forwarded_proto = "https" } })
  R.check("ssl-redirect: plain HTTP that the load balancer received over HTTPS is proxied (no redirect loop)", jump == "" and b == "web", jump)
  jump = req(T, router, "t.example.com", "/secure", { scheme = "https", vars = { portico_forwarded_proto = "http" } })
  R.check("ssl-redirect: HTTPS from a load balancer that received plain HTTP is redirected", jump == "@portico_https", jump)
  local _, _, var = req(T, router, "t.example.com", "/slow")
  R.check("route timeouts are handed to the balancer", var.portico_timeouts == "5 60 300", var.portico_timeouts)
  _, _, var = req(T, router, "t.example.com", "/")
  R.check("routes without timeouts leave the variable empty", var.portico_timeouts == "")
  R.check("TLS host marked for HSTS", var.portico_tls_host == "1")
  jump = req(T, router, "t.example.com", "/upload", { content_length = "100" })
  R.check("a profile route jumps to its named location", jump == "@portico_p_abc", jump)
  jump = req(T, router, "t.example.com", "/upload", { content_length = "101" })
  R.check("Content-Length over the profile's limit answers 413", jump == "@portico_413", jump)
  jump = req(T, router, "t.example.com", "/unknown-profile", { content_length = "101" })
  R.check("a profile nginx.conf does not have falls back to the default location", jump == "" and T.logged(T.ngx.WARN, "p_zzz is not in the running configuration"), jump)
end

do -- only the hosts that changed are compiled again; removals reach the worker
  local T, store, router = setup()
  local store_mod = store
  store_mod.apply_all({ r = { upsert = {
    ["a.example.com"] = { rules = { rule("prefix", "/", route("a1")) } },
    ["b.example.com"] = { rules = { rule("prefix", "/", route("b1")) } },
  } } })
  backend_for(T, router, "a.example.com", "/")
  local hosts = router._hosts()
  local a_before, b_before = hosts["a.example.com"], hosts["b.example.com"]
  store_mod.apply_all({ r = { upsert = { ["a.example.com"] = { rules = { rule("prefix", "/", route("a2")) } } } } })
  R.check("the changed host is served its new route", backend_for(T, router, "a.example.com", "/") == "a2")
  R.check("the other host was not compiled again", router._hosts()["b.example.com"] == b_before and router._hosts()["a.example.com"] ~= a_before)
  store_mod.apply_all({ r = { remove = { "a.example.com" } } })
  R.check("a removed host is gone", backend_for(T, router, "a.example.com", "/") == "@portico_unmatched")
  R.check("the others stay", backend_for(T, router, "b.example.com", "/") == "b1")
end

do -- a worker compiles a host only when a request needs it
  local T, store, router = setup()
  store.apply_all({ r = { upsert = {
    ["a.example.com"] = { rules = { rule("prefix", "/", route("a")) } },
    ["b.example.com"] = { rules = { rule("prefix", "/", route("b")) } },
    ["c.example.com"] = { rules = { rule("prefix", "/", route("c")) } },
  } } })
  backend_for(T, router, "b.example.com", "/")
  local compiled = {}
  for h in pairs(router._hosts()) do compiled[#compiled + 1] = h end
  R.check("only the requested host is compiled", #compiled == 1 and compiled[1] == "b.example.com", table.concat(compiled, ","))
  backend_for(T, router, "zzz.example.com", "/")
  R.check("an unknown host compiles nothing", router._hosts()["zzz.example.com"] == nil and router._hosts()["_"] == nil)
end

do -- Route CRD matches: methods, headers, query parameters; priority order; fall-through to the next path
  local T, store, router = setup()
  local function crule(match, path, r, cond) return { match = match, path = path, route = r, conditions = cond } end
  store.apply_all({ r = { upsert = { ["m.example.com"] = { rules = {
    crule("exact", "/login", route("login-post"), { methods = { "POST" } }),
    crule("prefix", "/api", route("api-v2"), { headers = { { name = "X-Version", type = "exact", value = "2" } } }),
    crule("prefix", "/api", route("api-beta"), { query = { { name = "beta", type = "regex", value = "^y" } } }),
    crule("prefix", "/api", route("api")),
    crule("prefix", "/only-get", route("only-get"), { methods = { "GET", "HEAD" } }),
    crule("prefix", "/", route("root")),
  } } } } })
  local function b(uri, o) local j, be = req(T, router, "m.example.com", uri, o); return j == "" and be or j end
  R.check("method condition met", b("/login", { method = "POST" }) == "login-post")
  R.check("method condition unmet: falls through to the next path (prefix /)", b("/login", { method = "GET" }) == "root")
  R.check("header condition (name case-insensitive, - as _)", b("/api/x", { vars = { http_x_version = "2" } }) == "api-v2")
  R.check("header value must be exact", b("/api/x", { vars = { http_x_version = "22" } }) == "api")
  R.check("query regex condition", b("/api/x", { vars = { arg_beta = "yes" } }) == "api-beta")
  R.check("query regex unmet", b("/api/x", { vars = { arg_beta = "no" } }) == "api")
  R.check("first candidate in controller order wins when several hold", b("/api/x", { vars = { http_x_version = "2", arg_beta = "yes" } }) == "api-v2")
  R.check("rule without conditions is the fallback", b("/api/x") == "api")
  R.check("HEAD allowed by methods list", b("/only-get/a", { method = "HEAD" }) == "only-get")
  R.check("DELETE not in methods: next prefix", b("/only-get/a", { method = "DELETE" }) == "root")
end

do -- weighted split, plugins, passive-health observation, websocket refusal, subrequests
  local T, store, router = setup({ "p_abc" })
  store.apply_all({ p = { upsert = {
    ns_ext = { name = "ns/ext", type = "external-auth", backendId = "auth", path = "/", method = "GET", forwardHeaders = {}, upstreamHeaders = {}, clientHeaders = {}, timeoutMs = 1000 },
    ns_req = { name = "ns/req", type = "request-headers", set = { { name = "x-a", value = "1" } }, add = {}, remove = {} },
    ns_resp = { name = "ns/resp", type = "response-headers", set = { { name = "x-b", value = "2" } }, add = {}, remove = {} },
    ns_deny = { name = "ns/deny", type = "ip-restriction", deny = { "0.0.0.0/0" }, status = 403 },
    ns_redirect = { name = "ns/redirect", type = "redirect", status = 301, scheme = "https", keepQuery = true },
  } }, r = { upsert = { ["w.example.com"] = { rules = {
    rule("prefix", "/split", route("a", { split = { { backendId = "a", weight = 3 }, { backendId = "b", weight = 1 }, { backendId = "c", weight = 0 } } })),
    rule("prefix", "/plug-async", route("p", { plugins = { "ns_req", "ns_ext" } })),
    rule("prefix", "/plug-sync", route("p", { plugins = { "ns_req" } })),
    rule("prefix", "/plug-filter", route("p", { plugins = { "ns_req", "ns_resp" } })),
    rule("prefix", "/plug-deny", route("p", { plugins = { "ns_deny" } })),
    rule("prefix", "/plug-missing", route("p", { plugins = { "ns_gone" } })),
    rule("prefix", "/plug-profile", route("pp", { plugins = { "ns_req" }, profile = "p_abc" })),
    rule("prefix", "/observe", route("o", { observe = true })),
    rule("prefix", "/redirect-only", route(nil, { plugins = { "ns_redirect" } })),
    -- As the data lane's JSON arrives: a rule without backend has backendId null, which cjson decodes to a userdata.
    rule("prefix", "/redirect-null", route(require("cjson").null, { plugins = { "ns_redirect" } })),
    rule("prefix", "/nows", route("n", { websocket = false })),
    rule("prefix", "/retry-only", route("r", { retryAttempts = 3 })),
    rule("prefix", "/retry-timeouts", route("r", { retryAttempts = 2, timeouts = { connect = 1, send = 2, read = 3 } })),
  } } } } })
  local counts = { a = 0, b = 0, c = 0 }
  for _ = 1, 4000 do
    local j, be = req(T, router, "w.example.com", "/split/x")
    if j == "" then counts[be] = (counts[be] or 0) + 1 end
  end
  -- 3:1 → a ~ 3000; binomial sd = sqrt(4000*.75*.25) ~ 27: 6 sd bound.
  R.check("split 3:1 within 6 sd", math.abs(counts.a - 3000) < 165 and counts.a + counts.b == 4000, counts.a .. "/" .. counts.b)
  R.check("weight 0 gets nothing", counts.c == 0)
  local j, be, v = req(T, router, "w.example.com", "/plug-async/x")
  R.check("a chain that must yield (external-auth): the plugin location's access phase runs it", j == "@portico_lua" and v.portico_plugins == "ns_req,ns_ext" and be == "p", j .. " " .. tostring(v.portico_plugins))
  j, be, v = req(T, router, "w.example.com", "/plug-sync/x")
  R.check("a synchronous chain runs in the router: proxied from location / with no plugin phase left", j == "" and v.portico_plugins == "" and be == "p", j)
  R.check("  ...and its request header was set", T.headers and T.headers["x-a"] == "1", tostring(T.headers and T.headers["x-a"]))
  j, be, v = req(T, router, "w.example.com", "/plug-filter/x")
  R.check("response-header handlers left for the plugin location", j == "@portico_lua" and v.portico_filters == "ns_resp" and v.portico_plugins == "", j .. " " .. tostring(v.portico_filters))
  j, be, v = req(T, router, "w.example.com", "/plug-deny/x", { vars = { remote_addr = "198.51.100.7" } })
  R.check("a refusal is answered by @portico_deny with the status recorded", j == "@portico_deny" and tostring(v.portico_deny):match("^403\n") ~= nil, j .. " " .. tostring(v.portico_deny))
  j, be, v = req(T, router, "w.example.com", "/plug-missing/x")
  R.check("an unknown plugin id fails closed (503)", j == "@portico_deny" and tostring(v.portico_deny):match("^503\n") ~= nil, j)
  j, be, v = req(T, router, "w.example.com", "/plug-profile/x")
  R.check("plugins on a profile route: proxied from the profile location", j == "@portico_p_abc" and v.portico_plugins == "", j)
  j, be, v = req(T, router, "w.example.com", "/observe")
  R.check("passive health: plugin location without plugins", j == "@portico_lua" and v.portico_plugins == "" and be == "o", j)
  j, be, v = req(T, router, "w.example.com", "/redirect-only", { vars = { scheme = "http", host = "w.example.com", args = "" } })
  R.check("rule without backend but with plugins runs them (redirect answered)", j == "@portico_deny" and tostring(v.portico_deny):match("^301\n") ~= nil and tostring(v.portico_deny):find("Location\thttps://w.example.com/redirect%-only") ~= nil, j .. " " .. tostring(v.portico_deny))
  j, be, v = req(T, router, "w.example.com", "/redirect-null", { vars = { scheme = "http", host = "w.example.com", args = "" } })
  R.check("a JSON-null backendId (userdata) is no backend: the redirect is answered", j == "@portico_deny" and tostring(v.portico_deny):match("^301\n") ~= nil, j .. " " .. tostring(v.portico_deny))
  j, be, v = req(T, router, "w.example.com", "/retry-only")
  R.check("retry attempts without timeouts go to the balancer as \"- - - n\"", v.portico_timeouts == "- - - 3", tostring(v.portico_timeouts))
  j, be, v = req(T, router, "w.example.com", "/retry-timeouts")
  R.check("retry attempts follow the route's timeouts", v.portico_timeouts == "1 2 3 2", tostring(v.portico_timeouts))
  j = req(T, router, "w.example.com", "/nows", { vars = { http_upgrade = "websocket" } })
  R.check("websocket false: upgrade refused with 400", j == "@portico_400", j)
  R.check("websocket false: plain request proxied", req(T, router, "w.example.com", "/nows") == "")
  T.ngx.is_subrequest = true
  j = req(T, router, "w.example.com", "/plug-sync/x")
  T.ngx.is_subrequest = false
  R.check("subrequests are not routed", j == "")
end

do -- Gateway API backendRef filters: each share of a split runs its own plugins, only for the requests it gets
  local T, store, router = setup()
  store.apply_all({ p = { upsert = {
    ns_req = { name = "ns/req", type = "request-headers", set = { { name = "x-route", value = "r" } }, add = {}, remove = {} },
    ns_a = { name = "ns/a", type = "request-headers", set = { { name = "backend", value = "a" } }, add = {}, remove = {} },
    ns_b = { name = "ns/b", type = "request-headers", set = { { name = "backend", value = "b" } }, add = {}, remove = {} },
    ns_ext = { name = "ns/ext", type = "external-auth", backendId = "auth", path = "/", method = "GET", forwardHeaders = {}, upstreamHeaders = {}, clientHeaders = {}, timeoutMs = 1000 },
  } }, r = { upsert = { ["bf.example.com"] = { rules = {
    rule("prefix", "/own", route("a", { split = { { backendId = "a", weight = 1, plugins = { "ns_a" } }, { backendId = "b", weight = 1, plugins = { "ns_b" } } } })),
    rule("prefix", "/with-route", route("a", { plugins = { "ns_req" }, split = { { backendId = "a", weight = 1, plugins = { "ns_req", "ns_a" } }, { backendId = "b", weight = 1, plugins = { "ns_req" } } } })),
    rule("prefix", "/async", route("a", { split = { { backendId = "a", weight = 1, plugins = { "ns_ext" } }, { backendId = "b", weight = 0, plugins = {} } } })),
  } } } } })
  local wrong, seen = 0, { a = 0, b = 0 }
  for _ = 1, 400 do
    T.headers = {}
    local j, be = req(T, router, "bf.example.com", "/own/x")
    if j ~= "" or T.headers.backend ~= be then wrong = wrong + 1 else seen[be] = seen[be] + 1 end
  end
  R.check("each share sets its own header, and only its own", wrong == 0 and seen.a > 100 and seen.b > 100, wrong .. " " .. seen.a .. "/" .. seen.b)
  wrong = 0
  for _ = 1, 200 do
    T.headers = {}
    local j, be = req(T, router, "bf.example.com", "/with-route/x")
    if j ~= "" or T.headers["x-route"] ~= "r" or (be == "a") ~= (T.headers.backend == "a") or T.headers.backend == "b" then wrong = wrong + 1 end
  end
  R.check("the route's plugins run for every share, a share's own only for it", wrong == 0, wrong)
  local j, be, v = req(T, router, "bf.example.com", "/async/x")
  R.check("a share's chain that must yield goes to the plugin location (not location /)", j == "@portico_lua" and v.portico_plugins == "ns_ext" and be == "a", j .. " " .. tostring(v.portico_plugins))
end

do -- 10,000 hosts: every lookup finds its own host's route
  local T, store, router = setup()
  local up = {}
  for i = 1, 10000 do
    up["h" .. i .. ".scale.test"] = { rules = { rule("prefix", "/api", route("api-" .. i)), rule("prefix", "/", route("root-" .. i)) } }
  end
  store.apply_all({ r = { upsert = up } })
  local wrong = 0
  local t0 = os.clock()
  for i = 1, 10000 do
    if backend_for(T, router, "h" .. i .. ".scale.test", "/api/x") ~= "api-" .. i then wrong = wrong + 1 end
    if backend_for(T, router, "h" .. i .. ".scale.test", "/x") ~= "root-" .. i then wrong = wrong + 1 end
  end
  R.check("10k hosts: every request routed to its own host", wrong == 0, wrong)
  print(string.format("# 20,000 lookups over 10,000 hosts in %.1f ms (mocked ngx)", (os.clock() - t0) * 1000))
end

do -- ingress-nginx's trailing-slash semantics: nginx's 301 for `location /foo/`, and the HTTPS redirect's dropped "/"
  local T, store, router = setup()
  local function srule(path, r) local x = rule("prefix", path, r); x.slashRedirect = true; return x end
  store.apply_all({ r = { upsert = { ["s.example.com"] = { tls = true, rules = {
    rule("exact", "/both", route("exact-both")),
    srule("/docs/", route("docs")),
    srule("/both/", route("both-dir")),
    srule("/twice/", route("twice-dir")),
    rule("prefix", "/twice", route("twice")),
    rule("prefix", "/secure", route("secure", { sslRedirect = true })),
    rule("prefix", "/keep", route("keep", { sslRedirect = true, preserveTrailingSlash = true })),
    rule("regex", "^/docs$", route("regex-docs")),
    rule("prefix", "/", route("root")),
  } } } } })
  local jump, _, v = req(T, router, "s.example.com", "/docs", { vars = { args = "a=1" } })
  R.check("nginx's auto-redirect: a location written \"/docs/\" answers \"/docs\" with 301 to \"/docs/\", query kept, before regexes",
    jump == "@portico_deny" and v.portico_deny == "301\n\nLocation\t/docs/?a=1", tostring(v.portico_deny))
  R.check("\"/docs/\" matches what is under it", backend_for(T, router, "s.example.com", "/docs/x") == "docs")
  R.check("\"/docs/\" is not a prefix of \"/docsx\"", backend_for(T, router, "s.example.com", "/docsx") == "root")
  R.check("an exact \"/both\" wins over the redirect", backend_for(T, router, "s.example.com", "/both") == "exact-both")
  R.check("a location named \"/twice\" itself wins over the redirect", backend_for(T, router, "s.example.com", "/twice") == "twice")
  R.check("…and \"/twice/x\" goes to the longer \"/twice/\"", backend_for(T, router, "s.example.com", "/twice/x") == "twice-dir")
  jump, _, v = req(T, router, "s.example.com", "/secure/dir/", { scheme = "http", vars = { request_uri = "/secure/dir/" } })
  R.check("redirect to HTTPS drops a final \"/\" of the request URI (ingress-nginx)", jump == "@portico_deny" and v.portico_deny == "308\n\nLocation\thttps://s.example.com/secure/dir", tostring(v.portico_deny))
  jump, _, v = req(T, router, "s.example.com", "/secure/dir/", { scheme = "http", vars = { request_uri = "/secure/dir/", portico_redirect_host = "lb.example.com" } })
  R.check("…to the forwarded host (without its port) when a trusted peer named one", v.portico_deny == "308\n\nLocation\thttps://lb.example.com/secure/dir", tostring(v.portico_deny))
  jump = req(T, router, "s.example.com", "/secure/dir/", { scheme = "http", vars = { request_uri = "/secure/dir/?x=1" } })
  R.check("…only when it is the last character of the request URI (a query keeps it)", jump == "@portico_https", jump)
  jump = req(T, router, "s.example.com", "/keep/", { scheme = "http", vars = { request_uri = "/keep/" } })
  R.check("preserve-trailing-slash keeps it", jump == "@portico_https", jump)
  -- use-port-in-redirects: the 301 is absolute and names the published port unless it is the scheme's default.
  local prule = srule("/p/", route("p"))
  prule.portInRedirect = true
  store.apply_all({ r = { upsert = { ["p.example.com"] = { tls = false, rules = { prule, rule("prefix", "/", route("root")) } } } } })
  jump, _, v = req(T, router, "p.example.com", "/p", { scheme = "http", vars = { args = "", host = "p.example.com", portico_forwarded_port_published = "30080" } })
  R.check("use-port-in-redirects: the published port is in the Location", v.portico_deny == "301\n\nLocation\thttp://p.example.com:30080/p/", string.format("%q", tostring(v.portico_deny)))
  jump, _, v = req(T, router, "p.example.com", "/p", { scheme = "http", vars = { args = "", host = "p.example.com", portico_forwarded_port_published = "80" } })
  R.check("use-port-in-redirects: …not the scheme's default port", v.portico_deny == "301\n\nLocation\thttp://p.example.com/p/", tostring(v.portico_deny))
end

do -- TLS passthrough (ssl-passthrough): the host's routes serve plain HTTP; over HTTPS (Portico's own TLS) it is 421
  local T, store, router = setup()
  store.apply_all({ r = { upsert = {
    ["pass.example.com"] = { tls = false, passthrough = true, rules = { rule("prefix", "/", route("pass-http")) } },
    ["*.pt.example.com"] = { tls = false, passthrough = true, rules = { rule("prefix", "/", route("pt-wild")) } },
    ["other.example.com"] = { tls = true, rules = { rule("prefix", "/", route("other")) } },
  } } })
  local jump, b = req(T, router, "pass.example.com", "/x", { scheme = "http" })
  R.check("passthrough host: plain HTTP is routed as usual", jump == "" and b == "pass-http", jump .. " " .. tostring(b))
  local v
  jump, _, v = req(T, router, "pass.example.com", "/x", { scheme = "https" })
  R.check("passthrough host over Portico's TLS: 421 Misdirected Request, nothing proxied",
    jump == "@portico_deny" and v.portico_deny == "421\nMisdirected Request" and v.portico_backend == "", jump .. " " .. tostring(v.portico_deny))
  jump = req(T, router, "a.pt.example.com", "/", { scheme = "https" })
  R.check("a passthrough wildcard answers 421 over HTTPS too", jump == "@portico_deny", jump)
  R.check("other hosts are served over HTTPS", backend_for(T, router, "other.example.com", "/") == "other")
end

do
  -- A function that creates a closure ends each return with UCLO, which LuaJIT 2.1's trace compiler does not handle:
  -- the router's per-request functions must have none, or every request runs them interpreted.
  local _, _, router = setup()
  local funcinfo = require("jit.util").funcinfo
  R.check("the router's per-request functions create no closures (compiled by LuaJIT)",
    not funcinfo(router.route).children and not funcinfo(router.route_set).children and not funcinfo(router.route_traced).children,
    tostring(funcinfo(router.route).children) .. " " .. tostring(funcinfo(router.route_set).children))
end

do -- Gateway API: a Gateway port's hosts are keyed by its pod port; Gateway wildcards cover one label or more
  local T = mock.fresh()
  local store = require("portico.store")
  local router = require("portico.router")
  router.configure({ profiles = {}, gatewayPorts = { 20001, 20002 } })
  store.apply_all({ r = { upsert = {
    ["20001/foo.example.com"] = { rules = { rule("prefix", "/", route("gw1-foo")) } },
    ["20001/*.example.com"] = { rules = { rule("prefix", "/", route("gw1-wild")) } },
    ["20001/*.b.example.com"] = { rules = { rule("prefix", "/", route("gw1-wild-b")) } },
    ["20001/_"] = { rules = { rule("prefix", "/", route("gw1-any")) } },
    ["20002/_"] = { rules = {
      rule("prefix", "/none", route(nil, { action = "error" })),
      rule("prefix", "/split", route("a", { split = { { backendId = "a", weight = 0 }, { backendId = "", weight = 1 } } })),
    } },
    ["foo.example.com"] = { rules = { rule("prefix", "/", route("ingress-foo")) } },
  } } })
  local on = function(port, host, uri) return { vars = { server_port = port } }, host, uri end
  local function via(port, host, uri)
    local o = on(port)
    local jump, b = req(T, router, host, uri, o)
    if jump ~= "" then return jump end
    return b
  end
  R.check("Gateway port: exact host", via("20001", "foo.example.com", "/") == "gw1-foo")
  R.check("Gateway port: a wildcard covers one label", via("20001", "x.example.com", "/") == "gw1-wild")
  R.check("Gateway port: ...and several, the most specific wildcard first", via("20001", "a.b.example.com", "/") == "gw1-wild-b" and via("20001", "a.c.example.com", "/") == "gw1-wild")
  R.check("Gateway port: no host matches → the listener's catch-all", via("20001", "other.org", "/") == "gw1-any")
  R.check("another Gateway port never sees the first one's hosts", via("20002", "foo.example.com", "/x") == "@portico_unmatched")
  R.check("Ingress ports never see Gateway hosts", via("8080", "x.example.com", "/") == "@portico_unmatched" and via("8080", "foo.example.com", "/") == "ingress-foo")
  R.check("a rule without a usable backend answers 500", via("20002", "any", "/none") == "@portico_500")
  R.check("the share of an unusable backendRef answers 500", via("20002", "any", "/split") == "@portico_500")
  -- Hostname precedence across routes (GatewayRouteHostnameIntersectionPrecedence): the routes naming the host come
  -- first even with a shorter path; then those whose wildcard covers it, then those without hostnames; then the
  -- wildcard tables; a table whose rules do not match falls through to the next.
  store.apply_all({ r = { upsert = {
    ["20001/abc.example.com"] = { rules = { rule("prefix", "/path", route("exact-short")) } },
    ["20001/abc.example.com#*.example.com"] = { rules = { rule("prefix", "/path/prefix/longer", route("wild-long")), rule("prefix", "/only-wild", route("wild-only")) } },
    ["20001/abc.example.com#"] = { rules = { rule("prefix", "/", route("hostless")) } },
    ["20001/*.example.com#*.com"] = { rules = { rule("prefix", "/com", route("broad-wild")) } },
  } } })
  R.check("precedence: the exact-hostname route wins over a wildcard route's longer path", via("20001", "abc.example.com", "/path/prefix/longer") == "exact-short")
  R.check("precedence: what the exact route does not match falls to the wildcard route", via("20001", "abc.example.com", "/only-wild") == "wild-only")
  R.check("precedence: then to the routes without hostnames", via("20001", "abc.example.com", "/other") == "hostless")
  R.check("precedence: a route naming the listener's wildcard before a broader route wildcard's longer path", via("20001", "x.example.com", "/com") == "gw1-wild")
  -- With the port's listener hostnames known, the fall-through stays within the listener the name belongs to
  -- (GatewayHTTPListenerIsolation): abc.foo.example.com is its own listener's, never *.example.com's.
  router.configure({ profiles = {}, gatewayPorts = { 20003 }, gatewayListeners = { [20003] = { "", ".example.com", ".foo.example.com", "abc.foo.example.com" } } })
  store.apply_all({ r = { upsert = {
    ["20003/_"] = { rules = { rule("prefix", "/empty", route("l-empty")) } },
    ["20003/*.example.com#"] = { rules = { rule("prefix", "/wild", route("l-wild")) } },
    ["20003/*.foo.example.com#"] = { rules = { rule("prefix", "/wildfoo", route("l-wildfoo")) } },
    ["20003/abc.foo.example.com#"] = { rules = { rule("prefix", "/abc", route("l-abc")) } },
    ["20003/x.foo.example.com"] = { rules = { rule("prefix", "/x", route("l-x-exact")) } },
  } } })
  R.check("isolation: a name is served by its own listener's routes", via("20003", "abc.foo.example.com", "/abc") == "l-abc" and via("20003", "bar.foo.example.com", "/wildfoo") == "l-wildfoo" and via("20003", "bar.example.com", "/wild") == "l-wild" and via("20003", "bar.org", "/empty") == "l-empty")
  R.check("isolation: never by another listener's, even when its own have no match", via("20003", "abc.foo.example.com", "/wild") == "@portico_unmatched" and via("20003", "abc.foo.example.com", "/empty") == "@portico_unmatched" and via("20003", "bar.foo.example.com", "/wild") == "@portico_unmatched")
  store.apply_all({ r = { upsert = { ["20003/abc.foo.example.com#*.example.com"] = { rules = { rule("prefix", "/broad", route("l-abc-broad")) } } } } })
  R.check("isolation: a route's wildcard broader than its listener's exact hostname still serves that listener", via("20003", "abc.foo.example.com", "/broad") == "l-abc-broad")
  R.check("isolation: an exact route under a wildcard listener falls back to that listener's other routes", via("20003", "x.foo.example.com", "/x") == "l-x-exact" and via("20003", "x.foo.example.com", "/wildfoo") == "l-wildfoo")
  router.configure({ profiles = {}, gatewayPorts = { 20001, 20002 } })
  local V = require("portico.validate")
  R.check("tier keys are valid route hosts", V.host_routes("20001/abc.example.com#*.example.com", { rules = {} }) == nil and V.host_routes("20001/abc.example.com#", { rules = {} }) == nil)
  R.check("a tier is a wildcard host name, nothing else", V.host_routes("20001/abc.example.com#evil.com", { rules = {} }) ~= nil and V.host_routes("20001/abc.example.com#*.ex ample", { rules = {} }) ~= nil and V.host_routes("20001/abc.example.com#*.a#b", { rules = {} }) ~= nil)
  -- TLS Gateway ports: the server name and the Host header must pick the same listener (else 421).
  router.configure({ profiles = {}, gatewayPorts = { 20001, 20002 }, gatewayTls = { [20001] = { "", "foo.example.com", ".example.com" } } })
  local function tls(sni, host)
    local jump, _, v = req(T, router, host, "/", { vars = { server_port = "20001", ssl_server_name = sni } })
    return jump == "@portico_deny" and v.portico_deny or jump
  end
  R.check("TLS: same listener by SNI and Host is served", tls("x.example.com", "y.example.com") == "" and tls("foo.example.com", "foo.example.com") == "")
  R.check("TLS: SNI of the wildcard listener, Host of the exact one → 421", tls("x.example.com", "foo.example.com") == "421\nMisdirected Request")
  R.check("TLS: SNI of the exact listener, Host of the catch-all → 421", tls("foo.example.com", "other.org") == "421\nMisdirected Request")
  R.check("TLS: both on the catch-all listener is served", tls("a.org", "b.org") == "")
  R.check("TLS: no SNI is not judged", tls(nil, "foo.example.com") == "")
  R.check("listener_of: longest wildcard wins", router._listener_of({ "", ".example.com", ".b.example.com" }, "a.b.example.com") == ".b.example.com")
  R.check("listener_of: no listener at all", router._listener_of({ "foo.example.com" }, "bar.org") == nil)
  -- Gateway API listener filters: the chain of the listener a name belongs to runs before route matching, on
  -- every request it accepts — unmatched paths too — in the order written; other listeners and ports are unaffected.
  router.configure({ profiles = {}, gatewayPorts = { 20004, 20005 }, gatewayListeners = { [20004] = { "", "deny.example.com", "auth.example.com", "hdr.example.com" }, [20005] = { "" } },
    gatewayFilters = { [20004] = { ["deny.example.com"] = { "ns_deny" }, ["auth.example.com"] = { "ns_hdr", "lf.gw.ns.gw.auth.0" }, ["hdr.example.com"] = { "ns_rw", "ns_hdr" } } } })
  store.apply_all({
    p = { upsert = {
      ns_deny = { name = "ns/deny", type = "ip-restriction", deny = { "0.0.0.0/0" }, status = 403 },
      ns_hdr = { name = "ns/hdr", type = "request-headers", set = { { name = "x-step", value = "hdr" } } },
      ns_rw = { name = "ns/rw", type = "rewrite", path = "/rewritten" },
      ["lf.gw.ns.gw.auth.0"] = { name = "gw auth", type = "external-auth", backendId = "ns_auth_80", path = "", method = "GET", forwardHeaders = {}, upstreamHeaders = {}, clientHeaders = {}, timeoutMs = 5000, gatewayApi = { allUpstreamHeaders = true } },
    } },
    r = { upsert = {
      ["20004/deny.example.com"] = { rules = { rule("prefix", "/exists", route("lf-deny")) } },
      ["20004/auth.example.com"] = { rules = { rule("prefix", "/exists", route("lf-auth")) } },
      ["20004/open.example.com#"] = { rules = { rule("prefix", "/exists", route("lf-open")) } },
      ["20004/_"] = { rules = { rule("prefix", "/exists", route("lf-any")) } },
      ["20005/_"] = { rules = { rule("prefix", "/exists", route("lf-other-port")) } },
    } },
  })
  local function lf(port, host, uri)
    local jump, b, v = req(T, router, host, uri, { vars = { server_port = port, remote_addr = "192.0.2.7", binary_remote_addr = "\192\0\2\7" } })
    return jump, b, v
  end
  local j1, _, v1 = lf("20004", "deny.example.com", "/exists")
  local j2, _, v2 = lf("20004", "deny.example.com", "/nothing-here")
  R.check("listener filters: a deny filter refuses a path that exists", j1 == "@portico_deny" and v1.portico_deny:match("^403") ~= nil)
  R.check("listener filters: and one that does not, with the same answer (no 404)", j2 == "@portico_deny" and v2.portico_deny == v1.portico_deny)
  local j3, _, v3 = lf("20004", "auth.example.com", "/nothing-here")
  R.check("listener filters: a chain with external auth goes to @portico_listener with the chain in its order, unmatched paths too", j3 == "@portico_listener" and v3.portico_plugins == "=ns_hdr,lf.gw.ns.gw.auth.0")
  local j4, b4 = lf("20004", "open.example.com", "/exists")
  local j5, b5 = lf("20005", "deny.example.com", "/exists")
  R.check("listener filters: a listener without filters on the same port is unaffected", j4 == "" and b4 == "lf-open")
  R.check("listener filters: another port is unaffected", j5 == "" and b5 == "lf-other-port")
  -- Written order kept: rewrite (engine order 12) before request-headers (9) as the listener lists them.
  local ch = require("portico.plugins")._chains()["=ns_rw,ns_hdr"]
  local order_ok = false
  if not ch then
    require("portico.plugins").run_sync("=ns_rw,ns_hdr")
    ch = require("portico.plugins")._chains()["=ns_rw,ns_hdr"]
  end
  if ch and ch.steps then order_ok = ch.steps[1].type == "rewrite" and ch.steps[2].type == "request-headers" end
  local sorted = require("portico.plugins")._chains()["ns_rw,ns_hdr"]
  if not sorted then require("portico.plugins").run_sync("ns_rw,ns_hdr"); sorted = require("portico.plugins")._chains()["ns_rw,ns_hdr"] end
  R.check("listener filters: a listener's chain runs in the order written (a route's is re-sorted)", order_ok and sorted.steps[1].type == "request-headers")
  -- A listener whose filters cannot be applied has the closed id: every request is answered 503.
  router.configure({ profiles = {}, gatewayPorts = { 20004 }, gatewayListeners = { [20004] = { "" } }, gatewayFilters = { [20004] = { [""] = { "_listener_closed" } } } })
  local j6, _, v6 = lf("20004", "any.example.com", "/exists")
  R.check("listener filters: a closed listener answers 503 to every request", j6 == "@portico_deny" and v6.portico_deny:match("^503") ~= nil)
  -- JSON null where a port's filters are absent (cjson.null, a userdata) is no filter.
  router.configure({ profiles = {}, gatewayPorts = { 20005 }, gatewayListeners = { [20005] = { "" } }, gatewayFilters = { [20005] = { [""] = require("cjson").null } } })
  local j7, b7 = lf("20005", "x.example.com", "/exists")
  R.check("listener filters: a null chain is none", j7 == "" and b7 == "lf-other-port")
  router.configure({ profiles = {} })
  R.check("without Gateway ports the port is not read: the Ingress hosts answer", via("20001", "foo.example.com", "/") == "ingress-foo")
  local validate = require("portico.validate")
  R.check("validate: a Gateway listener host", validate.host_routes("20001/foo.example.com", { rules = {} }) == nil and validate.host_routes("20001/_", { rules = {} }) == nil and validate.host_routes("20001/*.example.com", { rules = {} }) == nil)
  R.check("validate: a bad Gateway listener host is refused", validate.host_routes("20001/Foo bar", { rules = {} }) ~= nil and validate.host_routes("2000100/x.example", { rules = {} }) ~= nil)
end

do -- the native path (native.lua → ngx_http_portico_vars_route.c): what the router registers for nginx to route
  -- without Lua. A fake native module records the calls; the C side's matching is tested in real nginx
  -- (reconcilers/nginx-driver/nginx/native-route.nginx.test.ts).
  local T = mock.fresh()
  local calls = {}
  local function record(kind) return function(...) calls[#calls + 1] = { kind, ... }; return true end end
  package.loaded["portico.native"] = { reset = record("reset"), backend = record("backend"), host = record("host"), path = record("path"), native = function() return false end }
  package.loaded["portico.peer_handoff"] = {
    addr = function(host, port) return "sa:" .. host .. ":" .. port, host .. ":" .. port end,
    handoff = function() return true end, failure = function() end, forget = function() end,
  }
  local store = require("portico.store")
  local router = require("portico.router")
  router.configure({ profiles = { "p_x" } })
  local G = 7
  store.generation = function() return G end
  local function ep(ip) return { address = ip, port = 80, weight = 1 } end
  store.apply_all({ b = { upsert = {
    ns_web_80 = { balance = "round_robin", endpoints = { ep("198.51.100.1"), ep("198.51.100.2") } },
    ns_two_80 = { endpoints = { { address = "198.51.100.3", port = 80, weight = 3 } } },
    ns_ewma_80 = { balance = "ewma", endpoints = { ep("198.51.100.4") } },
  } }, p = { upsert = {
    ns_req = { name = "ns/req", type = "request-headers", set = { { name = "x-a", value = "1" } }, add = {}, remove = {} },
  } }, r = { upsert = {
    ["n.example.com"] = { tls = true, metrics = "host-labels", rules = {
      rule("exact", "/exact", route("ns_two_80", { metrics = "exact-labels" })),
      { match = "prefix", path = "/dir/", slashRedirect = true, route = { source = "Ingress/ns/x", backendId = "ns_web_80", sslRedirect = true } },
      rule("prefix", "/nows", route("ns_web_80", { websocket = false })),
      rule("prefix", "/plug", route("ns_web_80", { plugins = { "ns_req" } })),
      rule("prefix", "/profile", route("ns_web_80", { profile = "p_x" })),
      rule("prefix", "/timeouts", route("ns_web_80", { timeouts = { connect = 1, send = 2.5, read = 3 } })),
      rule("prefix", "/retries", route("ns_web_80", { timeouts = { connect = 1, send = 2, read = 3 }, retryAttempts = 2 })),
      rule("prefix", "/submilli", route("ns_web_80", { timeouts = { connect = 0.0004, send = 2, read = 3 } })),
      rule("prefix", "/ewma", route("ns_ewma_80")),
      rule("prefix", "/", route("ns_web_80")),
    } },
    ["*.wild.example.com"] = { rules = { rule("prefix", "/", route("ns_web_80")) } },
    ["rx.example.com"] = { rules = { rule("regex", "^/r[0-9]+", route("ns_web_80")), rule("prefix", "/", route("ns_web_80")) } },
  } } })
  local function of(kind)
    local out = {}
    for _, c in ipairs(calls) do if c[1] == kind then out[#out + 1] = c end end
    return out
  end
  local function paths()
    local out = {}
    for _, c in ipairs(of("path")) do out[c[2]] = { backend = c[3], upstream = c[4], mk = c[5], flags = c[6], tms = c[7] } end
    return out
  end
  req(T, router, "n.example.com", "/x")
  local resets = of("reset")
  R.check("native: the table is reset for the data's generation before anything is registered", #resets == 1 and resets[1][2] == 7 and calls[1][1] == "reset")
  local hosts = of("host")
  R.check("native: the host is registered by its name with its labels, TLS flag and path counts",
    #hosts == 1 and hosts[1][2] == "n.example.com" and hosts[1][3] == "host-labels" and hosts[1][4] == 1 and hosts[1][5] == 1 and hosts[1][6] == 1 and hosts[1][7] == 9,
    require("cjson").encode(hosts[1] or {}))
  local p = paths()
  R.check("native: a plain prefix route names its backend, ingress-nginx's upstream name and no flags",
    p["/"] and p["/"].backend == "ns_web_80" and p["/"].upstream == "ns-web-80" and p["/"].mk == "" and p["/"].flags == 0)
  R.check("native: an exact route with its own labels", p["/exact"] and p["/exact"].backend == "ns_two_80" and p["/exact"].mk == "exact-labels" and p["/exact"].flags == 0)
  R.check("native: ssl-redirect is flagged (nginx leaves plain HTTP to the router)", p["/dir/"] and p["/dir/"].flags == 1)
  R.check("native: websocket false is flagged", p["/nows"] and p["/nows"].flags == 2)
  R.check("native: nginx's slash redirect is left to the router", p["/dir"] and p["/dir"].flags == 4)
  R.check("native: a route's own timeouts go with it, in milliseconds (none for a route without)",
    p["/timeouts"] and p["/timeouts"].flags == 0 and p["/timeouts"].backend == "ns_web_80" and type(p["/timeouts"].tms) == "table"
      and p["/timeouts"].tms[1] == 1000 and p["/timeouts"].tms[2] == 2500 and p["/timeouts"].tms[3] == 3000 and p["/"].tms == nil)
  -- Retry attempts are the balancer's to arrange; a timeout under a millisecond is one set_timeouts would not set.
  for _, path in ipairs({ "/plug", "/profile", "/retries", "/submilli", "/ewma" }) do
    R.check("native: " .. path .. " is left to the router", p[path] and p[path].flags == 4 and p[path].backend == "", tostring(p[path] and p[path].flags))
  end
  local bs = {}
  for _, c in ipairs(of("backend")) do bs[c[2]] = c end
  R.check("native: round-robin backends are registered with their endpoints and retries",
    bs.ns_web_80 and #bs.ns_web_80[3] == 2 and bs.ns_web_80[3][1].sa == "sa:198.51.100.1:80" and bs.ns_web_80[4] == 1 and bs.ns_two_80 and bs.ns_two_80[3][1].weight == 3)
  R.check("native: an ewma backend is not", bs.ns_ewma_80 == nil)
  local n = #calls
  req(T, router, "n.example.com", "/x")
  R.check("native: a host is registered once per generation", #calls == n)
  req(T, router, "a.wild.example.com", "/")
  hosts = of("host")
  R.check("native: a name reached through a wildcard is registered as a name of its own, with the wildcard's routes",
    #hosts == 2 and hosts[2][2] == "a.wild.example.com" and of("path")[#of("path")][2] == "/" and of("path")[#of("path")][3] == "ns_web_80")
  n = #calls
  req(T, router, "a.wild.example.com", "/")
  R.check("native: …once per generation", #calls == n)
  req(T, router, "rx.example.com", "/")
  hosts = of("host")
  R.check("native: a host with regexes is flagged (only exact paths are answered natively)", #hosts == 3 and hosts[3][2] == "rx.example.com" and hosts[3][4] == 2)
  -- Host names a client makes up: at most 256 such names per generation (the rest are the router's).
  for i = 1, 300 do req(T, router, "n" .. i .. ".wild.example.com", "/") end
  R.check("native: names through a wildcard are bounded per generation", #of("host") == 3 + 255, tostring(#of("host")))
  G = 8
  calls = {}
  req(T, router, "n.example.com", "/x")
  R.check("native: a new generation resets the table and the host is registered again",
    calls[1] and calls[1][1] == "reset" and calls[1][2] == 8 and #of("host") == 1 and #of("backend") >= 2)
  req(T, router, "a.wild.example.com", "/")
  R.check("native: …and the names through a wildcard, with a new bound", #of("host") == 2 and of("host")[2][2] == "a.wild.example.com")
  -- Gateway listener ports are handed to the reset (their requests are left to the router).
  router.configure({ profiles = {}, gatewayPorts = { 20003 } })
  G = 9
  calls = {}
  req(T, router, "n.example.com", "/x")
  R.check("native: Gateway listener ports go with the reset", calls[1] and calls[1][1] == "reset" and calls[1][3][1] == 20003)
  package.loaded["portico.native"] = nil
  package.loaded["portico.peer_handoff"] = nil
end

R.done()
