-- Unit tests for external-auth's auth URL on the request's own host ("https://$host/oauth2/auth", the oauth2-proxy
-- pattern) and for variables in the auth URL, with a mocked ngx: the subrequest goes to the backend of the route the
-- host serves the auth path with (the router's lookup), and fails closed (500, logged) when there is none, when that
-- route requires authentication itself, or when its backend is another namespace's.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local function nx(fields, path)
  local n = { scheme = "https", host = "", ownHost = true, alwaysSetCookie = false, timeouts = { connect = 5, send = 60, read = 60 } }
  for k, v in pairs(fields or {}) do n[k] = v end
  return { name = "ns/app (annotations)", type = "external-auth", backendId = "extauth.own-host", path = path or "/oauth2/auth",
    method = "GET", forwardHeaders = {}, upstreamHeaders = { "x-auth-request-user" }, clientHeaders = {}, timeoutMs = 60000, ingressNginx = n }
end
local function route(backend, plugins) return { source = "Ingress/ns/x", backendId = backend, sslRedirect = false, plugins = plugins } end
local function rule(path, r) return { match = "prefix", path = path, route = r } end

local T = mock.fresh()
local store = require("portico.store")
local router = require("portico.router")
router.configure({ profiles = {} })
local plugins = {
  own = nx(),
  ownns = nx({ namespace = "ns" }),
  q = nx({ uri = { "/oauth2/auth?rd=", { v = "escaped_request_uri" }, "&u=", { v = "request_uri" }, "&a=", { v = "arg_x" } } }),
  lit = nx({ ownHost = nil, host = "auth.example", scheme = "http", uri = { "/check", { v = "request_uri" }, "?h=", { v = "http_x_h" } } }),
  basic = { name = "ns/basic", type = "basic-auth", realm = "r", users = {} },
}
plugins.lit.backendId = "ns_auth_80"
plugins.lit.ingressNginx.ownHost = nil
local v, err = store.apply_all({ p = { upsert = plugins }, r = { upsert = {
  ["app.example"] = { rules = { rule("/oauth2", route("ns_oauth2-proxy_4180")), rule("/", route("ns_app_80", { "own" })) } },
  ["bare.example"] = { rules = { rule("/app", route("ns_app_80", { "own" })) } },
  ["public.example"] = { rules = { rule("/", route("ns_public_80")), rule("/admin", route("ns_app_80", { "own" })) } },
  ["loop.example"] = { rules = { rule("/oauth2", route("ns_oauth2-proxy_4180", { "own" })), rule("/", route("ns_app_80", { "own" })) } },
  ["basic.example"] = { rules = { rule("/oauth2", route("ns_oauth2-proxy_4180", { "basic" })) } },
  ["shared.example"] = { rules = { rule("/oauth2", route("other_oauth2-proxy_4180")), rule("/", route("ns_app_80", { "ownns" })) } },
  ["down.example"] = { rules = { rule("/oauth2", { source = "Ingress/ns/y", backendId = nil, action = "unavailable", sslRedirect = false }) } },
} } })
assert(v, err)
local engine = require("portico.plugins")

-- One request through the plugin location (see plugins_test.lua); the auth service answers `answer`.
local answer
T.capture = function() return answer end
local function request(o)
  T.headers = {}
  for k, x in pairs(o.headers or {}) do T.headers[k:lower()] = x end
  T.args, T.method, T.ngx.ctx, T.ngx.status = o.args or {}, "GET", {}, 0
  T.exited, T.printed, T.captures = nil, {}, {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local var = T.ngx.var
  for k in pairs(var) do var[k] = nil end
  var.portico_plugins, var.remote_addr, var.uri, var.host, var.scheme = o.plugins, "192.0.2.10", o.uri or "/", o.host, "https"
  var.args, var.request_uri, var.request_method = o.query, (o.uri or "/") .. (o.query and ("?" .. o.query) or ""), "GET"
  for k, x in pairs(o.vars or {}) do var[k] = x end
  engine.access()
  local status = T.ngx.status
  if T.exited and T.exited ~= 200 then status = T.exited end
  return { status = status, proxied = T.exited == nil, req = T.headers, capture = T.captures[1] }
end

answer = { status = 202, header = { ["X-Auth-Request-User"] = "alice" }, body = "" }
local r = request({ plugins = "own", host = "app.example", uri = "/page" })
local c = r.capture
R.check("own host: the subrequest goes to the backend of the host's route for the auth path, over HTTP, Host = the request's",
  r.proxied and c and c.opts.vars.portico_auth_backend == "ns_oauth2-proxy_4180" and c.opts.vars.portico_auth_uri == "/oauth2/auth"
  and c.opts.vars.portico_auth_scheme == "http" and c.opts.vars.portico_auth_host == "", c and c.opts.vars.portico_auth_backend)
R.check("own host: …the auth service sees X-Forwarded-Proto = the auth URL's scheme and X-Forwarded-Host = the host",
  c.headers["x-forwarded-proto"] == "https" and c.headers["x-forwarded-host"] == "app.example")
R.check("own host: …2xx passes with auth-response-headers; the instance's own options are untouched",
  r.req["x-auth-request-user"] == "alice" and engine._instances().own.opts.vars.portico_auth_backend == "extauth.own-host")

r = request({ plugins = "own", host = "bare.example", uri = "/page" })
R.check("own host: a host without a route for the auth path fails closed (500, no subrequest)", r.status == 500 and not r.proxied and r.capture == nil)
R.check("own host: …with a log line naming the host and path", T.logged(T.ngx.ERR, "host bare.example has no route for /oauth2/auth; answering 500"))
r = request({ plugins = "own", host = "public.example", uri = "/admin" })
R.check("own host: the host's catch-all \"/\" (the application, not an auth service) does not count: fails closed", r.status == 500 and r.capture == nil
  and T.logged(T.ngx.ERR, "has no route for /oauth2/auth but its catch"))
r = request({ plugins = "own", host = "loop.example", uri = "/page" })
R.check("own host: a route for the auth path that requires auth-url itself fails closed (no recursion)", r.status == 500 and r.capture == nil
  and T.logged(T.ngx.ERR, "requires authentication itself %(it would loop%)"))
r = request({ plugins = "own", host = "basic.example", uri = "/page" })
R.check("own host: …as does one with any other authentication", r.status == 500 and r.capture == nil)
r = request({ plugins = "own", host = "down.example", uri = "/page" })
R.check("own host: a route without a backend (failed closed itself) fails closed", r.status == 500 and r.capture == nil and T.logged(T.ngx.ERR, "has no backend"))
r = request({ plugins = "ownns", host = "shared.example", uri = "/page" })
R.check("own host: a route whose backend is another namespace's fails closed (allow-cross-namespace-auth off)", r.status == 500 and r.capture == nil
  and T.logged(T.ngx.ERR, "is another namespace's"))
r = request({ plugins = "own", host = "shared.example", uri = "/page" })
R.check("own host: …without a namespace (global-auth-url, or allowed) it is used", r.proxied and r.capture.opts.vars.portico_auth_backend == "other_oauth2-proxy_4180")

r = request({ plugins = "q", host = "app.example", uri = "/a b", query = "x=1&y=\"2\"", vars = { arg_x = "1 2#\r\n" } })
c = r.capture
R.check("auth URL variables: filled from the request, percent-encoded where they could not stand in the query",
  c and c.opts.vars.portico_auth_uri == "/oauth2/auth?rd=%2Fa%20b%3Fx%3D1%26y%3D%222%22&u=/a%20b?x=1&y=%222%22&a=1%202%23%0D%0A", c and c.opts.vars.portico_auth_uri)
r = request({ plugins = "lit", host = "app.example", uri = "/p?q", vars = { http_x_h = "a?b/c" } })
c = r.capture
R.check("auth URL variables: a literal host keeps its backend; in the path \"?\" is encoded too (a value never starts the query)",
  c and c.opts.vars.portico_auth_backend == "ns_auth_80" and c.opts.vars.portico_auth_uri == "/check/p%3Fq?h=a?b/c" and c.opts.vars.portico_auth_scheme == "http"
  and c.opts.vars.portico_auth_host == "auth.example", c and c.opts.vars.portico_auth_uri)

-- The configuration check (validate.lua) refuses what the controller never sends.
local ea = require("portico.plugins.external_auth")
local function bad(fields, path) return ea.check(nx(fields, path)) ~= nil end
R.check("check: a valid own-host instance passes", ea.check(nx()) == nil and ea.check(plugins.q) == nil and ea.check(plugins.ownns) == nil)
R.check("check: own host with a host, a variable in the path, an unknown variable or a bad namespace is refused",
  bad({ host = "evil.example" }) and bad({ uri = { "/oauth2/", { v = "uri" } } }) and bad({ uri = { "/a?x=", { v = "request_body" } } })
  and bad({ namespace = "Bad_NS" }) and bad({ ownHost = false }))
local lit = nx({ host = "a.example", namespace = "ns" })
lit.ingressNginx.ownHost = nil
R.check("check: a namespace without own host is refused", ea.check(lit) ~= nil)
R.done()
