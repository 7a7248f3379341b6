-- Unit tests for the snippet plugin (compiled ingress-nginx snippets) with a mocked ngx: through the engine in the
-- access phase (ngx.ctx survives to the header filter) and in the router's synchronous run (the answer recorded for
-- @portico_deny, the response headers waiting across the jump for the plugin location's header filter). Regexes
-- are valid both as PCRE and as Lua patterns (the mock's ngx.re runs Lua patterns). Outcomes are asserted.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local T, engine, snippet
local request_key = 0

local function setup(plugins)
  T = mock.fresh()
  local ngx = T.ngx
  -- ngx.re.match on Lua patterns: captures 1..n, false for none; the "i" option lower-cases both sides.
  ngx.re.match = function(s, p, opts)
    if opts and opts:find("i", 1, true) then s, p = s:lower(), p:lower() end
    local r = { s:find(p) }
    if #r == 0 then return nil end
    local m = { [0] = s:sub(r[1], r[2]) }
    for i = 3, #r do m[i - 2] = r[i] end
    return m
  end
  ngx.resp = { get_headers = function()
    local out = {}
    for k, v in pairs(T.resp_headers) do out[k] = v end
    return out
  end }
  local req = ngx.req
  local orig = req.get_headers
  req.get_headers = function() return orig() end
  req.set_uri_args = function(a) T.set_args = a; ngx.var.args = a end
  local store = require("portico.store")
  local v, err = store.apply_all({ p = { upsert = plugins } })
  assert(v, err)
  engine = require("portico.plugins")
  snippet = require("portico.plugins.snippet")
  -- The request pointer stands for the request across the named-location jump.
  snippet._key = function() return request_key end
  return T
end

local function reset(o)
  request_key = request_key + 1
  T.headers = {}
  for k, v in pairs(o.headers or {}) do T.headers[k:lower()] = v end
  T.args = {}
  T.ngx.ctx = {}
  T.ngx.status = 0
  T.exited, T.new_uri, T.set_args = nil, nil, nil
  T.printed = {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.uri = o.uri or "/"
  v.args = o.query
  v.host = o.host or "a.example"
  v.scheme = o.scheme or "http"
  v.remote_addr = "192.0.2.10"
  v.request_uri = (o.uri or "/") .. (o.query and ("?" .. o.query) or "")
  v.content_type = o.content_type
  v.portico_upstream_host = ""
end

local function backend_answers(o)
  T.ngx.status = o.status or 200
  for k, x in pairs(o.headers or {}) do T.ngx.header[k] = x end
end

local function copy_resp()
  local out = {}
  for k, x in pairs(T.resp_headers) do out[k] = x end
  return out
end

-- The access phase (an async chain): returns the outcome after the header filter.
local function via_access(ids, o)
  reset(o)
  T.ngx.var.portico_plugins = ids
  engine.access()
  local proxied = T.exited == nil
  if proxied then backend_answers(o.upstream or {}) end
  engine.header_filter()
  local status = T.ngx.status
  if T.exited and T.exited ~= 200 then status = T.exited end
  return { status = status, proxied = proxied, headers = copy_resp(), req = T.headers, body = table.concat(T.printed) }
end

-- The router's synchronous run, then either @portico_deny's answer or the jump to the plugin location (ngx.ctx
-- is lost) and its header filter.
local function via_router(ids, o)
  reset(o)
  require("portico.store").sync() -- as the router does first
  local jump, filters = engine.run_sync(ids)
  T.ngx.ctx = {}
  if jump == "@portico_deny" then
    T.ngx.var.portico_deny = T.ngx.var.portico_deny
    engine.answer()
    local status = T.ngx.status
    return { jump = jump, status = status, headers = copy_resp(), body = table.concat(T.printed), req = T.headers }
  end
  T.ngx.var.portico_filters = filters or ""
  backend_answers(o.upstream or {})
  engine.header_filter()
  engine.log()
  return { jump = jump, filters = filters, status = T.ngx.status, headers = copy_resp(), req = T.headers, proxied = true }
end

local function sn(server, location)
  return { name = "default/app (annotations)", type = "snippet", server = server, location = location }
end
local function V(...) return { ... } end

-------------------------------------------------------------------------------------------- response headers
setup({
  hdr = sn(nil, {
    { op = "response", action = "set", name = "X-Frame-Options", value = V("DENY") },
    { op = "response", action = "add", name = "X-Added", value = V("on ", { v = "host" }) },
    { op = "response", action = "add", name = "X-Always", value = V("yes"), always = true },
    { op = "response", action = "clear", name = "X-Internal-*" },
    { op = "response", action = "set", name = "X-Only-404", value = V("missing"), statuses = { 404 } },
    { op = "response", action = "set", name = "X-Html", value = V("html"), types = { "text/html" } },
  }),
})
do
  local r = via_access("hdr", { host = "shop.example", upstream = { status = 200, headers = { ["X-Internal-Id"] = "7", ["X-Internal-Trace"] = "t", ["Content-Type"] = "text/html; charset=utf-8" } } })
  R.check("response: more_set_headers sets, add_header adds with $host", r.proxied and r.headers["x-frame-options"] == "DENY" and r.headers["x-added"] == "on shop.example", tostring(r.headers["x-added"]))
  R.check("response: more_clear_headers X-Internal-* removes every header with the prefix", r.headers["x-internal-id"] == nil and r.headers["x-internal-trace"] == nil)
  R.check("response: -s 404 does not apply to a 200; -t text/html applies to text/html; charset=utf-8", r.headers["x-only-404"] == nil and r.headers["x-html"] == "html")
  r = via_access("hdr", { upstream = { status = 404, headers = { ["Content-Type"] = "application/json" } } })
  R.check("response: add_header without always skips a 404; with always it is there", r.headers["x-added"] == nil and r.headers["x-always"] == "yes", tostring(r.headers["x-added"]))
  R.check("response: -s 404 applies to a 404; -t text/html does not apply to JSON", r.headers["x-only-404"] == "missing" and r.headers["x-html"] == nil)
  r = via_access("hdr", { upstream = { status = 200, headers = { ["X-Added"] = "upstream" } } })
  local added = r.headers["x-added"]
  R.check("response: add_header appends to the backend's header of the same name", type(added) == "table" and added[1] == "upstream" and added[2] == "on a.example", type(added))
end

---------------------------------------------------------------------- the router's synchronous run and the jump
do
  local r = via_router("hdr", { host = "h.example", upstream = { status = 200 } })
  R.check("router: a snippet with response headers leaves its id for the plugin location", r.jump == nil and r.filters == "hdr", tostring(r.jump) .. " " .. tostring(r.filters))
  R.check("router: the header filter after the jump applies the values evaluated in the router", r.headers["x-frame-options"] == "DENY" and r.headers["x-added"] == "on h.example", tostring(r.headers["x-added"]))
  R.check("router: nothing is left waiting once the request is done", snippet._waiting() == 0, snippet._waiting())
  -- A request that never reaches the header filter (client gone): the log phase drops what it left.
  reset({})
  require("portico.store").sync()
  engine.run_sync("hdr")
  local left = snippet._waiting()
  engine.log()
  R.check("router: the log phase drops headers a request left behind", left == 1 and snippet._waiting() == 0, left .. " " .. snippet._waiting())
end

-------------------------------------------------------------------------------------- conditions and return
setup({
  gate = sn(nil, {
    { op = "response", action = "add", name = "X-Policy", value = V("strict"), always = true },
    { op = "if", cond = { test = "eq", left = V({ v = "http_x_env" }), right = V("dev") }, body = {
      { op = "response", action = "set", name = "X-Why", value = V("dev blocked") },
      { op = "return", status = 403, text = V("no dev here\n") },
    } },
    { op = "if", cond = { test = "match", left = V({ v = "uri" }), regex = "^/u/([a-z]+)$", caseless = false, negate = false }, body = {
      { op = "response", action = "set", name = "X-User", value = V({ c = 1 }) },
    } },
    { op = "if", cond = { test = "nonempty", value = V({ v = "arg_debug" }) }, body = {
      { op = "return", status = 200, text = V("debug ", { v = "arg_debug" }) },
    } },
    { op = "if", cond = { test = "match", left = V({ v = "http_user_agent" }), regex = "bot", caseless = true, negate = true }, body = {
      { op = "response", action = "set", name = "X-Human", value = V("1") },
    } },
  }),
})
do
  local r = via_router("gate", { headers = { ["x-env"] = "dev" } })
  R.check("if: a true condition's return is answered through @portico_deny", r.jump == "@portico_deny" and r.status == 403, tostring(r.jump) .. " " .. tostring(r.status))
  R.check("if: …with exactly its text (newline kept, nothing added)", r.body == "no dev here\n", ("%q"):format(r.body))
  R.check("if: …and the headers: top-level always, and the if block's own", r.headers["x-policy"] == "strict" and r.headers["x-why"] == "dev blocked", tostring(r.headers["x-why"]))
  r = via_access("gate", { headers = { ["x-env"] = "dev" } })
  R.check("if: the same answer in the access phase (header filter applies the headers)", r.status == 403 and r.body == "no dev here\n" and r.headers["x-why"] == "dev blocked" and r.headers["x-policy"] == "strict", r.status .. " " .. ("%q"):format(r.body))
  r = via_router("gate", { headers = { ["x-env"] = "prod" }, uri = "/u/alice" })
  R.check("if: a false condition does not answer: proxied", r.proxied and r.status == 200, tostring(r.jump))
  R.check("if: ~ sets $1 for its block", r.headers["x-user"] == "alice" and r.headers["x-why"] == nil, tostring(r.headers["x-user"]))
  R.check("if: !~* (caseless, negated) holds for a browser", r.headers["x-human"] == "1")
  r = via_router("gate", { headers = { ["user-agent"] = "GoogleBOT/2" } })
  R.check("if: !~* does not hold for BOT (caseless)", r.headers["x-human"] == nil)
  r = via_router("gate", { uri = "/u/Alice1" })
  R.check("if: a regex that does not match sets nothing", r.headers["x-user"] == nil)
  T.args = {}
  reset({ query = "debug=1" })
  T.args = { debug = "yes" }
  require("portico.store").sync()
  local jump = engine.run_sync("gate")
  engine.answer()
  R.check("if: ($arg_debug) with a value answers 200 with the interpolated text", jump == "@portico_deny" and T.ngx.status == 200 and table.concat(T.printed) == "debug yes", table.concat(T.printed))
end

--------------------------------------------------------------------------------------------- rewrite and set
setup({
  rw = sn(
    { { op = "set", name = "tenant", value = V({ v = "http_x_tenant" }) }, { op = "break" }, { op = "set", name = "tenant", value = V("never") } },
    {
      { op = "request", action = "set", name = "X-Tenant", value = V({ s = "tenant" }) },
      { op = "request", action = "set", name = "X-Path", value = V({ v = "uri" }) },
      { op = "rewrite", regex = "^/old/(.*)$", path = V("/new/", { c = 1 }), keepArgs = true, stop = true },
      { op = "rewrite", regex = "^/new/(.*)$", path = V("/never"), keepArgs = true, stop = false },
      { op = "rewrite", regex = "^/q/(.*)$", path = V("/search"), args = V("term=", { c = 1 }), keepArgs = true, stop = false },
      { op = "rewrite", regex = "^/go/(.*)$", path = V({ v = "scheme" }, "://docs.example.com/", { c = 1 }), keepArgs = false, redirect = 301, stop = false },
      { op = "request", action = "set", name = "host", value = V({ v = "http_x_backend_host" }) },
    }),
})
do
  local r = via_router("rw", { uri = "/old/a/b", query = "x=1", headers = { ["x-tenant"] = "acme", ["x-backend-host"] = "api.internal" } })
  R.check("rewrite: $1 into the new path; break stops the later rewrites", T.new_uri == "/new/a/b", tostring(T.new_uri))
  R.check("rewrite: the client's query is kept", T.set_args == nil and T.ngx.var.args == "x=1")
  R.check("set: a server-snippet break ends only the server block; its variable reaches the location's header", r.req["x-tenant"] == "acme", tostring(r.req["x-tenant"]))
  R.check("request headers are evaluated after the statements ($uri after the rewrite)", r.req["x-path"] == "/new/a/b", tostring(r.req["x-path"]))
  R.check("proxy_set_header Host sets the Host sent upstream", T.ngx.var.portico_upstream_host == "api.internal" and T.ngx.var.portico_proxy_host == "api.internal", tostring(T.ngx.var.portico_proxy_host))
  r = via_router("rw", { uri = "/q/cats", query = "page=2", headers = { ["x-backend-host"] = "bad host\r\nx: y" } })
  R.check("rewrite: a replacement with a query sets it, followed by the client's", T.new_uri == "/search" and T.set_args == "term=cats&page=2", tostring(T.set_args))
  R.check("proxy_set_header Host with a value that is no host name is not used", T.ngx.var.portico_upstream_host == "" and T.ngx.var.portico_proxy_host == nil)
  r = via_router("rw", { uri = "/go/intro", query = "a=b", scheme = "https" })
  R.check("rewrite: a URL replacement with permanent answers 301 with the Location, query dropped (?)", r.jump == "@portico_deny" and r.status == 301 and r.headers["location"] == "https://docs.example.com/intro", tostring(r.headers["location"]))
  r = via_router("rw", { uri = "/other\r\nSet-Cookie: x=1" })
  R.check("values read from the request cannot break a header: control characters are percent-encoded", r.req["x-path"] == "/other%0D%0ASet-Cookie: x=1", tostring(r.req["x-path"]))
end

-------------------------------------------------------------------------------- return with a Location, order
setup({
  redir = sn(nil, { { op = "return", status = 302, location = V("https://", { v = "host" }, { v = "request_uri" }) }, { op = "response", action = "set", name = "X-After", value = V("declared after return") } }),
  ip = { name = "ns/ip", type = "ip-restriction", deny = { "192.0.2.0/24" }, status = 403 },
  bad = sn(nil, { { op = "rewrite", regex = "[unclosed", path = V("/x"), keepArgs = true, stop = false } }),
})
do
  local r = via_router("redir", { uri = "/p a", query = "q=1", host = "w.example" })
  T.ngx.var.request_uri = "/p a?q=1"
  R.check("return 302 URL: Location built from the request, a space encoded", r.status == 302 and r.headers["location"] == "https://w.example/p%20a?q=1", tostring(r.headers["location"]))
  R.check("return: header directives after it still apply (declarative, as in nginx)", r.headers["x-after"] == "declared after return")
  r = via_router("redir,ip", {})
  R.check("order: the snippet runs after ip-restriction (a refused client never gets the snippet's answer)", r.status == 403 and r.headers["location"] == nil, r.status)
  r = via_router("bad", {})
  R.check("a snippet whose regex PCRE refuses fails closed (503)", r.status == 503, r.status)
end

------------------------------------------------------------------------------------------------------ validate
do
  local validate = require("portico.validate")
  local good = sn({ { op = "set", name = "a", value = V("x") } }, {
    { op = "response", action = "add", name = "X-A", value = V({ s = "a" }, { v = "http_x_y" }), always = true },
    { op = "if", cond = { test = "match", left = V({ v = "uri" }), regex = "^/a", caseless = true, negate = false }, body = { { op = "return", status = 200, text = V("ok\n") } } },
  })
  local gerr = validate.plugin("ing.default.app.snippet", good)
  R.check("validate: a compiled snippet is accepted", gerr == nil, tostring(gerr))
  local bad = {
    { "a variable outside the allowlist", { { op = "set", name = "a", value = V({ v = "upstream_addr" }) } } },
    { "a framing header", { { op = "response", action = "set", name = "Content-Length", value = V("1") } } },
    { "a CR/LF in a literal value", { { op = "response", action = "set", name = "X-A", value = V("a\r\nb: c") } } },
    { "nested if", { { op = "if", cond = { test = "nonempty", value = V({ v = "uri" }) }, body = { { op = "if", cond = { test = "nonempty", value = V({ v = "uri" }) }, body = {} } } } } },
    { "an unknown op", { { op = "content_by_lua", code = "os.exit()" } } },
    { "return 444", { { op = "return", status = 444 } } },
    { "setting an nginx variable", { { op = "set", name = "http_host", value = V("x") } } },
    { "request Expect", { { op = "request", action = "set", name = "Expect", value = V("100-continue") } } },
    { "a capture out of range", { { op = "set", name = "a", value = V({ c = 0 }) } } },
  }
  for _, b in ipairs(bad) do
    local err = validate.plugin("ing.default.app.snippet", sn(nil, b[2]))
    R.check("validate: refused: " .. b[1], err ~= nil, "accepted")
  end
end

R.done()
