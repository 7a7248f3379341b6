-- Small helpers shared by the plugins.
local _M = {}

local REASONS = {
  [400] = "Bad Request", [401] = "Unauthorized", [403] = "Forbidden", [404] = "Not Found", [429] = "Too Many Requests",
  [500] = "Internal Server Error", [502] = "Bad Gateway", [503] = "Service Unavailable",
}

-- Answers the request from Portico with a short plain-text body (no JSON, nothing about why beyond the status
-- line's words) and the given response headers. Returns true: access handlers return it to stop the chain.
-- Synchronous mode: the router runs a chain of plugins that need no subrequest straight from its set_by_lua
-- handler (no access-phase coroutine, no jump for plugin-free answers). There nothing can be sent yet: a denial and
-- the response headers an access handler sets are recorded in `pending`, and the router jumps to @portico_deny,
-- whose content handler sends them (plugins.answer).
local pending
function _M.begin_sync() pending = {} end

-- Capture (satisfy: any): an access handler's denial is recorded in a table of its own instead of being sent, so
-- the engine can try the next access handler. In the router's synchronous run `pending` is swapped (nothing yields
-- there); in the access phase the record is per request (ngx.ctx: external-auth yields for its subrequest, and
-- other requests run meanwhile). Returns the record; capture_end(rec) restores.
function _M.capture_begin()
  local rec = { outer = pending }
  if pending then
    pending = rec
  else
    ngx.ctx.portico_capture = rec
  end
  return rec
end
function _M.capture_end(rec)
  if rec.outer then
    pending = rec.outer
  else
    ngx.ctx.portico_capture = nil
  end
  rec.outer = nil
  return rec
end

-- Sends (or, in the synchronous run, records) a captured denial as it was made.
function _M.replay(rec)
  local status = rec.status or 500
  if pending then
    pending.status, pending.body, pending.raw = status, rec.body, rec.raw
    for _, h in ipairs(rec.headers or {}) do _M.resp_header(h[1], h[2]) end
    return true
  end
  for _, h in ipairs(rec.headers or {}) do ngx.header[h[1]] = h[2] end
  return _M.deny(status, nil, rec.body)
end

-- Where a denial or an access handler's response header goes: the synchronous run's record, a capture, or nil
-- (sent now).
local function recorder()
  if pending then return pending end
  local ctx = ngx.ctx
  return ctx and ctx.portico_capture
end
function _M.end_sync()
  local p = pending
  pending = nil
  return p
end

-- A response header set by an access handler (a preflight's, a redirect's Location).
function _M.resp_header(name, value)
  local rec = recorder()
  if rec then
    local h = rec.headers
    if not h then h = {}; rec.headers = h end
    h[#h + 1] = { name, value }
  else
    ngx.header[name] = value
  end
end

function _M.deny(status, headers, body)
  body = body or REASONS[status] or (status < 500 and "Request refused" or "Unavailable")
  local rec = recorder()
  if rec then
    rec.status, rec.body = status, body
    if headers then
      for name, value in pairs(headers) do _M.resp_header(name, value) end
    end
    return true
  end
  ngx.status = status
  if headers then
    for name, value in pairs(headers) do ngx.header[name] = value end
  end
  ngx.header["Content-Type"] = "text/plain; charset=utf-8"
  ngx.header["Cache-Control"] = "no-store"
  ngx.print(body, "\n")
  ngx.exit(200)
  return true
end

-- Whether handlers run synchronously in the router (answers are recorded for @portico_deny).
function _M.in_sync() return pending ~= nil end

-- An answer with exactly this body (the snippet plugin's `return code text`): no newline added, Content-Type
-- text/plain unless a header of the answer set one, no Cache-Control.
function _M.answer_raw(status, body)
  if pending then
    pending.status, pending.body, pending.raw = status, body, true
    return true
  end
  ngx.status = status
  if ngx.header["Content-Type"] == nil then ngx.header["Content-Type"] = "text/plain" end
  ngx.print(body)
  ngx.exit(200)
  return true
end

-- An answer without a body (a CORS preflight's 204).
function _M.answer(status)
  if pending then
    pending.status, pending.body = status, nil
    return true
  end
  ngx.exit(status)
  return true
end

-- The Host sent upstream (rewrite's host, a snippet's proxy_set_header Host): $portico_upstream_host, and the value
-- itself into $portico_proxy_host, the map proxy_set_header Host reads (http.hbs). That map is keyed on $http_host
-- alone (the client's Host), so a request no plugin touches evaluates one map for its Host; a value written here is
-- what nginx reads instead (a map variable Lua assigns is taken as evaluated). An empty one is the client's, as the
-- map would give it.
function _M.set_upstream_host(v)
  local var = ngx.var
  var.portico_upstream_host = v
  if v ~= "" then var.portico_proxy_host = v else var.portico_proxy_host = var.portico_client_host end
end

function _M.header_var(name)
  return "http_" .. name:lower():gsub("-", "_")
end

-- Element-wise prefix match ("/foo" matches "/foo" and "/foo/...", never "/foobar"); "/" matches everything.
-- Returns the rest of the path after the prefix ("" or starting with "/"), or nil.
function _M.strip_prefix(path, prefix)
  if prefix == "/" then return path:sub(2) == "" and "" or path end
  local n = #prefix
  if prefix:sub(-1) == "/" then n = n - 1; prefix = prefix:sub(1, n) end
  if path:sub(1, n) ~= prefix then return nil end
  local rest = path:sub(n + 1)
  if rest ~= "" and rest:sub(1, 1) ~= "/" then return nil end
  return rest
end

-- Joins a replacement prefix and the rest of a path without doubling or losing the "/".
function _M.join(to, rest)
  if rest == "" then return to end
  if to:sub(-1) == "/" then return to .. rest:sub(2) end
  return to .. rest
end

-- Decodes %XX escapes of a configured URL path into $uri's form ("+" stays "+", unlike ngx.unescape_uri).
function _M.unescape_path(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

-- Percent-encodes what may not appear literally in a URI path (the path in $uri is decoded).
function _M.escape_path(s)
  return (s:gsub("[^%w%-%._~!%$&'%(%)%*%+,;=:@/]", function(c) return string.format("%%%02X", c:byte()) end))
end

-- A raw query string as the client sent it, with anything that may not appear in a header value encoded.
function _M.escape_query(s)
  return (s:gsub("[^\33-\126]", function(c) return string.format("%%%02X", c:byte()) end))
end

local logged_at = {}
-- Logs at most once per 10 s per key (a misconfiguration must not flood the error log).
function _M.log_every(key, level, ...)
  local now = ngx.now()
  if (logged_at[key] or 0) + 10 <= now then
    logged_at[key] = now
    ngx.log(level, ...)
  end
end

-- A header's value(s) as a list (ngx.header / ngx.req.get_headers give a string or a table).
function _M.as_list(v)
  if v == nil then return {} end
  if type(v) == "table" then return v end
  return { v }
end

return _M
