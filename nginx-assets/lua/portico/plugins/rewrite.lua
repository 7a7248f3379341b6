-- rewrite: changes the path (and Host) sent to the backend, not what the client sees. One of:
--   path                 the whole path;
--   prefix {from, to}    a leading prefix, matched element-wise (a path that does not start with it is kept);
--   regex {pattern, replacement}  PCRE on the path, first match replaced, $0..$9 / ${n} in the replacement
--                        refer to the captures (nothing else is interpreted); no match keeps the path.
--   regex {pattern, replacement, nginx = true}  nginx's `rewrite <pattern> <replacement> break`, as ingress-nginx's
--                        rewrite-target writes it (`rewrite "(?i)<path>" <target> break`): case-insensitive, the
--                        first match anywhere in the path, and the WHOLE path becomes the replacement with $0..$9 /
--                        ${n} expanded ("/something/new" with "/something(/|$)(.*)" and "/$2" becomes "/new"). A "?"
--                        in the result starts the new query, followed by the client's ("&"), or alone when the "?"
--                        ends it — nginx's rules; no match keeps the path.
-- host sets the Host header sent upstream ($portico_upstream_host, which nginx.conf sends instead of $host).
-- The path is the decoded, normalized $uri; nginx percent-encodes it again when proxying, so configured paths
-- (URL paths, %-escapes allowed) are decoded first: "/a%20b" reaches the backend as "/a%20b". The query is kept.
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "rewrite"
_M.order = 12

-- $0..$9 and ${n} of a replacement, from a match table (an unmatched group is empty).
local function expand(tpl, m)
  local out = tpl:gsub("%${(%d+)}", function(d) return m[tonumber(d)] or "" end)
  out = out:gsub("%$(%d)", function(d) return m[tonumber(d)] or "" end)
  return out
end

local function access(self)
  local uri = ngx.var.uri
  local new
  if self.whole then
    local m = ngx.re.match(uri, self.pattern, "joi")
    if m then
      new = expand(self.replacement, m)
      local q = new:find("?", 1, true)
      if q then
        local args = new:sub(q + 1)
        new = new:sub(1, q - 1)
        local orig = ngx.var.args
        if args ~= "" and orig and orig ~= "" then args = args .. "&" .. orig end
        ngx.req.set_uri_args(args)
      end
      if new == "" then new = "/" end
    end
  elseif self.path then
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
  if self.host then
    util.set_upstream_host(self.host)
  elseif self.host_header then
    -- the client's Host header as sent, port included (ingress-nginx's upstream-vhost: $http_host)
    local hh = ngx.var.http_host
    if hh and hh ~= "" then util.set_upstream_host(hh) end
  end
  return false
end

function _M.new(conf)
  local dec = util.unescape_path
  local self = { path = conf.path and dec(conf.path), host = conf.host, host_header = conf.hostHeader == true, access = access }
  if conf.prefix then self.from, self.to = dec(conf.prefix.from), dec(conf.prefix.to) end
  if conf.regex then
    self.pattern, self.replacement = conf.regex.pattern, conf.regex.replacement
    self.whole = conf.regex.nginx == true
    -- Compile once now: a pattern PCRE refuses fails the instance (the engine answers 503 and logs it).
    local _, err = ngx.re.find("", self.pattern, self.whole and "joi" or "jo")
    if err then error("invalid regex: " .. err) end
  end
  return self
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, compiles, prefix_pair = C.str, C.compiles, C.prefix_pair

-- A replacement template for ngx.re.sub: literal text with $0-$9, ${n} and $$ only.
local function replacement(r)
  if type(r) ~= "string" or #r > 2048 or not r:match("^[\32-\126]*$") then return false end
  local rest = r:gsub("%$%$", ""):gsub("%${%d+}", ""):gsub("%$%d", "")
  return not rest:find("$", 1, true)
end

-- The rewrite fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  local n = (p.path ~= nil and 1 or 0) + (p.prefix ~= nil and 1 or 0) + (p.regex ~= nil and 1 or 0)
  if n > 1 then return "path, prefix and regex exclude each other" end
  if n == 0 and p.host == nil and p.hostHeader == nil then return "nothing to rewrite" end
  if p.hostHeader ~= nil and p.hostHeader ~= true then return "hostHeader must be true when present" end
  if p.hostHeader ~= nil and p.host ~= nil then return "host and hostHeader exclude each other" end
  if p.path ~= nil and not str(p.path, 2048, C.PATH) then return "invalid path" end
  if p.prefix ~= nil and not prefix_pair(p.prefix) then return "invalid prefix" end
  if p.regex ~= nil then
    local r = p.regex
    if type(r) ~= "table" or not str(r.pattern, 1024, "^[\32-\126]+$") or not compiles(r.pattern) then return "regex: the pattern does not compile" end
    if not replacement(r.replacement) then return "regex: invalid replacement ($0-$9, ${n} and $$ only)" end
    if r.nginx ~= nil and r.nginx ~= true then return "regex: nginx must be true when present" end
  end
  if p.host ~= nil and not str(p.host, 253, "^[%w.-]+$") and not str(p.host, 253, "^[%w.-]+:%d+$") then return "invalid host" end
end

return _M
