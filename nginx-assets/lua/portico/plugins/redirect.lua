-- redirect: answers with `status` (301/302/303/307/308) and a Location built from the request:
--   scheme, host, port  replace the request's (when any of them is configured the Location is absolute:
--                       <scheme or the request's>://<host or the request's Host>[:<port>]; else it is a path
--                       only, which the client resolves against the URL it asked for, port included);
--   path                replaces the whole path, or
--   prefix {from, to}   replaces a leading prefix matched element-wise ("/old" matches "/old" and "/old/x", not
--                       "/older"); a request whose path does not start with `from` is not redirected;
--   query               a query of its own (percent-encoded, as configured), before the client's;
--   keepQuery           appends the client's query string.
--   requestUri          the path and query are the client's request URI as sent ($request_uri), a final "/"
--                       dropped with stripTrailingSlash (ingress-nginx's from-to-www-redirect);
--   hostFromRequest     without host: the Location is absolute, <scheme>://<Host header><path> (ingress-nginx's
--                       app-root: `return 302 $scheme://$http_host<app-root>`).
-- Configured paths are URL paths (already %-escaped) and are written as they are; what comes from the request
-- ($uri, decoded) is percent-encoded where a URI needs it. Nothing is read as an nginx variable.
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "redirect"
_M.order = 11

local function access(self)
  local var = ngx.var
  local path = var.uri
  if self.request_uri then
    local ru = var.request_uri or "/"
    if self.strip_slash and ru:byte(-1) == 47 then ru = ru:sub(1, -2) end
    local loc = (self.scheme or var.scheme) .. "://" .. (self.host or var.host) .. self.port .. util.escape_query(ru)
    return util.deny(self.status, { Location = loc }, "Redirecting")
  end
  if self.path then
    path = self.path
  elseif self.from then
    local rest = util.strip_prefix(path, self.from)
    if not rest then return false end
    path = util.join(self.to, util.escape_path(rest))
  else
    path = util.escape_path(path)
  end
  local loc = path
  if self.absolute then
    local host = self.host or (self.host_from_request and (var.http_host or var.host)) or var.host
    loc = (self.scheme or var.scheme) .. "://" .. host .. self.port .. path
  end
  local sep = "?"
  if self.query then
    loc = loc .. "?" .. self.query
    sep = "&"
  end
  if self.keep_query then
    local args = var.args
    if args and args ~= "" then loc = loc .. sep .. util.escape_query(args) end
  end
  return util.deny(self.status, { Location = loc }, "Redirecting")
end

function _M.new(conf)
  local self = {
    status = conf.status,
    scheme = conf.scheme,
    host = conf.host,
    port = conf.port and (":" .. conf.port) or "",
    path = conf.path,
    keep_query = conf.keepQuery ~= false,
    query = conf.query,
    request_uri = conf.requestUri == true,
    strip_slash = conf.stripTrailingSlash == true,
    host_from_request = conf.hostFromRequest == true,
    access = access,
  }
  if conf.prefix then self.from, self.to = util.unescape_path(conf.prefix.from), conf.prefix.to end
  self.absolute = conf.scheme ~= nil or conf.host ~= nil or conf.port ~= nil or self.host_from_request
  return self
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_int, bool_or_nil, prefix_pair = C.str, C.is_int, C.bool_or_nil, C.prefix_pair

local function hostname(h) return str(h, 253, "^[%w.-]+$") or str(h, 64, "^%[[%x:.]+%]$") end

-- The redirect fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if not C.REDIRECT_STATUS[p.status] then return "status must be 301, 302, 303, 307 or 308" end
  if p.scheme ~= nil and p.scheme ~= "http" and p.scheme ~= "https" then return "scheme must be http or https" end
  if p.host ~= nil and not hostname(p.host) then return "invalid host" end
  if p.port ~= nil and not is_int(p.port, 1, 65535) then return "invalid port" end
  if p.path ~= nil and not str(p.path, 2048, C.PATH) then return "invalid path" end
  if p.prefix ~= nil and not prefix_pair(p.prefix) then return "invalid prefix" end
  if p.path ~= nil and p.prefix ~= nil then return "path and prefix exclude each other" end
  if not bool_or_nil(p.keepQuery) then return "keepQuery must be a boolean" end
  if p.query ~= nil and not str(p.query, 2048, "^[%w%-%._~!%$&'%(%)%*%+,;=:@/%?%%]+$") then return "invalid query" end
  for _, k in ipairs({ "requestUri", "stripTrailingSlash", "hostFromRequest" }) do
    if p[k] ~= nil and p[k] ~= true then return k .. " must be true when present" end
  end
end

return _M
