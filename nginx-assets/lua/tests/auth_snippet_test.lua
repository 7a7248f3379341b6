-- Unit tests for auth-snippet in external-auth's ingress-nginx mode, with a mocked ngx: the compiled statements
-- (set, if, proxy_set_header / more_set_input_headers / more_clear_input_headers) shape the headers of the auth
-- subrequest, after auth-proxy-set-headers; the client request is put back as it was; the auth service's answer
-- decides; the configuration check refuses what does not apply to the auth subrequest.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local function inst(snippet, set_headers)
  return { name = "team/app (annotations)", type = "external-auth", backendId = "team_auth_80", path = "/check",
    method = "GET", forwardHeaders = {}, upstreamHeaders = { "x-user" }, clientHeaders = {}, timeoutMs = 60000,
    ingressNginx = { scheme = "http", host = "auth.team.svc", alwaysSetCookie = false,
      timeouts = { connect = 5, send = 60, read = 60 }, setHeaders = set_headers, snippet = snippet } }
end

local SNIPPET = {
  { op = "set", name = "team", value = { "platform" } },
  { op = "if", cond = { test = "eq", left = { { v = "http_x_legacy" } }, right = { "1" } },
    body = { { op = "set", name = "team", value = { "legacy-", { s = "team" } } } } },
  { op = "request", action = "set", name = "Authorization", value = { "Bearer ", { v = "http_x_token" } } },
  { op = "request", action = "set", name = "X-Team", value = { { s = "team" } } },
  { op = "request", action = "clear", name = "X-Debug-*" },
  { op = "request", action = "set", name = "X-Only-If-Sent", value = { "replaced" }, replaceOnly = true },
  -- after auth-proxy-set-headers: the snippet's value wins, as its line comes later in ingress-nginx's location
  { op = "request", action = "set", name = "X-From-Configmap", value = { "snippet" } },
}

local T = mock.fresh()
local store = require("portico.store")
local router = require("portico.router")
router.configure({ profiles = {} })
local ea = require("portico.plugins.external_auth")
R.check("check: a valid auth snippet passes", ea.check(inst(SNIPPET)) == nil, ea.check(inst(SNIPPET)))
local v, err = store.apply_all({ p = { upsert = {
  snip = inst(SNIPPET, { { name = "x-from-configmap", value = { "configmap" } } }),
} }, r = { upsert = {
  ["app.test"] = { rules = { { match = "prefix", path = "/", route = { source = "Ingress/team/app", backendId = "team_web_80", sslRedirect = false, plugins = { "snip" } } } } },
} } })
assert(v, err)
local engine = require("portico.plugins")

-- The fake auth service: "Bearer good" → 200 with X-User, "Bearer forbidden" → 403, else 401.
T.capture = function()
  local auth = T.headers["authorization"]
  if auth == "Bearer good" then return { status = 200, header = { ["X-User"] = "alice" }, body = "" } end
  if auth == "Bearer forbidden" then return { status = 403, header = {}, body = "" } end
  return { status = 401, header = { ["WWW-Authenticate"] = "Bearer" }, body = "" }
end

local function request(headers)
  T.headers = {}
  for k, x in pairs(headers or {}) do T.headers[k:lower()] = x end
  T.args, T.method, T.ngx.ctx, T.ngx.status = {}, "GET", {}, 0
  T.exited, T.printed, T.captures = nil, {}, {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local var = T.ngx.var
  for k in pairs(var) do var[k] = nil end
  var.portico_plugins, var.remote_addr, var.uri, var.host, var.scheme = "snip", "192.0.2.10", "/page", "app.test", "http"
  var.request_uri, var.request_method = "/page", "GET"
  engine.access()
  local status = T.ngx.status
  if T.exited and T.exited ~= 200 then status = T.exited end
  return { status = status, proxied = T.exited == nil, req = T.headers, capture = T.captures[1] }
end

local r = request({ ["X-Token"] = "good", ["X-Debug-Trace"] = "1", ["X-Debug-Id"] = "2", ["Authorization"] = "Basic client" })
local c = r.capture
R.check("auth snippet: the auth subrequest carries the snippet's headers (proxy_set_header with a request variable, set)",
  c and c.headers["authorization"] == "Bearer good" and c.headers["x-team"] == "platform", c and c.headers["authorization"])
R.check("auth snippet: …more_clear_input_headers with a prefix removes them from the subrequest",
  c.headers["x-debug-trace"] == nil and c.headers["x-debug-id"] == nil)
R.check("auth snippet: …-r sets only a header the request has", c.headers["x-only-if-sent"] == nil)
R.check("auth snippet: …after auth-proxy-set-headers (the snippet's value wins)", c.headers["x-from-configmap"] == "snippet")
R.check("auth snippet: …ingress-nginx's own auth headers are still there", c.headers["x-original-url"] == "http://app.test/page")
R.check("auth snippet: the auth service's 200 lets the request through, with its response headers",
  r.proxied and r.req["x-user"] == "alice")
R.check("auth snippet: the proxied request is put back as the client sent it",
  r.req["authorization"] == "Basic client" and r.req["x-debug-trace"] == "1" and r.req["x-team"] == nil and r.req["x-from-configmap"] == nil)

r = request({ ["X-Token"] = "forbidden" })
R.check("auth snippet: the auth service's 403 (decided on the snippet's header) denies", r.status == 403 and not r.proxied)
r = request({})
R.check("auth snippet: without X-Token the auth service gets \"Bearer \" and its 401 denies",
  r.status == 401 and r.capture.headers["authorization"] == "Bearer ", r.capture.headers["authorization"])
r = request({ ["X-Token"] = "good", ["X-Legacy"] = "1", ["X-Only-If-Sent"] = "client" })
R.check("auth snippet: an if block's set applies when its condition holds; -r replaces a header the request has",
  r.capture.headers["x-team"] == "legacy-platform" and r.capture.headers["x-only-if-sent"] == "replaced", r.capture.headers["x-team"])
r = request({ ["X-Token"] = "good\r\nX-Evil: 1" })
R.check("auth snippet: a control character a client sent is percent-encoded, never a header of its own",
  r.capture.headers["authorization"] == "Bearer good%0D%0AX-Evil: 1" and r.capture.headers["x-evil"] == nil, r.capture.headers["authorization"])

-- The configuration check refuses what the controller never compiles for an auth-snippet.
local function bad(list) return ea.check(inst(list)) ~= nil end
R.check("check: return, rewrite and response headers do not apply to the auth subrequest",
  bad({ { op = "return", status = 401 } })
  and bad({ { op = "rewrite", regex = "^/", path = { "/x" }, keepArgs = true, stop = false } })
  and bad({ { op = "response", action = "set", name = "X-A", value = { "b" } } })
  and bad({ { op = "if", cond = { test = "nonempty", value = { { v = "http_x" } } }, body = { { op = "return", status = 200 } } } }))
R.check("check: Host and Proxy-Connection cannot be set on the auth subrequest; framing headers neither",
  bad({ { op = "request", action = "set", name = "host", value = { "a" } } })
  and bad({ { op = "request", action = "set", name = "Proxy-Connection", value = { "a" } } })
  and bad({ { op = "request", action = "set", name = "Content-Length", value = { "1" } } }))
R.check("check: the auth location's own URI and query variables are refused",
  bad({ { op = "request", action = "set", name = "X-U", value = { { v = "uri" } } } })
  and bad({ { op = "request", action = "set", name = "X-U", value = { { v = "arg_x" } } } })
  and bad({ { op = "if", cond = { test = "eq", left = { { v = "args" } }, right = { "" } }, body = {} } }))
R.check("check: a variable outside the allowlist is refused", bad({ { op = "set", name = "a", value = { { v = "portico_backend" } } } }))
R.done()
