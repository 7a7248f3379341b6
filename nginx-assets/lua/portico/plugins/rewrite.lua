-- rewrite: changes the path (and Host) sent to the backend, not what the client sees. One of:
--   path                 the whole path;
--   prefix {from, to}    a leading prefix, matched element-wise (a path that does not start with it is kept);
--   regex {pattern, replacement}  PCRE on the path, first match replaced, $0..$9 / ${n} in the replacement
--                        refer to the captures (nothing else is interpreted); no match keeps the path.
-- host sets the Host header sent upstream ($portico_upstream_host, which nginx.conf sends instead of $host).
-- The path is the decoded, normalized $uri; nginx percent-encodes it again when proxying, so configured paths
-- (URL paths, %-escapes allowed) are decoded first: "/a%20b" reaches the backend as "/a%20b". The query is kept.
local util = require("portico.plugins.util")

local _M = {}

local function access(self)
  local uri = ngx.var.uri
  local new
  if self.path then
    new = self.path
  elseif self.from then
    local rest = util.strip_prefix(uri, self.from)
    if rest then new = util.join(self.to, rest) end
  elseif self.pattern then
    local out, n = ngx.re.sub(uri, self.pattern, self.replacement, "jo")
    if out and n and n > 0 then new = out end
  end
  if new and new ~= uri then
    if new:sub(1, 1) ~= "/" then new = "/" .. new end
    ngx.req.set_uri(new, false)
  end
  if self.host then ngx.var.portico_upstream_host = self.host end
  return false
end

function _M.new(conf)
  local dec = util.unescape_path
  local self = { path = conf.path and dec(conf.path), host = conf.host, access = access }
  if conf.prefix then self.from, self.to = dec(conf.prefix.from), dec(conf.prefix.to) end
  if conf.regex then
    self.pattern, self.replacement = conf.regex.pattern, conf.regex.replacement
    -- Compile once now: a pattern PCRE refuses fails the instance (the engine answers 503 and logs it).
    local _, err = ngx.re.find("", self.pattern, "jo")
    if err then error("invalid regex: " .. err) end
  end
  return self
end

return _M
