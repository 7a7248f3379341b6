-- Small helpers shared by the plugins.
local _M = {}

local REASONS = {
  [400] = "Bad Request", [401] = "Unauthorized", [403] = "Forbidden", [404] = "Not Found", [429] = "Too Many Requests",
  [500] = "Internal Server Error", [502] = "Bad Gateway", [503] = "Service Unavailable",
}

-- Answers the request from Portico with a short plain-text body (no JSON, nothing about why beyond the status
-- line's words) and the given response headers. Returns true: access handlers return it to stop the chain.
function _M.deny(status, headers, body)
  body = body or REASONS[status] or (status < 500 and "Request refused" or "Unavailable")
  ngx.status = status
  if headers then
    for name, value in pairs(headers) do ngx.header[name] = value end
  end
  ngx.header["Content-Type"] = "text/plain; charset=utf-8"
  ngx.header["Cache-Control"] = "no-store"
  ngx.print(body, "\n")
  -- Output was sent: HTTP_OK finishes the request with what was written (a status here would be ignored).
  ngx.exit(200)
  return true
end

-- An answer with nginx's own empty body (204 preflight). Returns true.
function _M.answer(status)
  ngx.exit(status)
  return true
end

-- The nginx variable holding a request header: "x-api-key" -> "http_x_api_key".
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

return _M
