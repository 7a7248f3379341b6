-- key-auth: the client sends a key in a header (default "apikey") or, when configured, a query parameter. The
-- key is hashed (SHA-256) and looked up among the consumers of the plugin's namespace, which hold only hashes
-- (a hash-table lookup of a digest reveals nothing about the key through timing). Unknown or missing → 401.
-- Found → the consumer is the request's identity (X-Consumer-Username upstream, rate-limit by=consumer); with
-- hideCredentials the key header/parameter is removed before proxying. Keys are never logged.
local consumers = require("portico.plugins.consumers")
local crypto = require("portico.plugins.crypto")
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "key-auth"
_M.order = 3
-- Identifies the client (a consumer): a consumer's own plugins replace or join only those that run after the last
-- of these (plugins.lua).
_M.auth = true
-- May be flagged satisfyAny (ingress-nginx's `satisfy any`, plugins.lua).
_M.satisfy_any = true

local function access(self, ctx)
  local var = ngx.var
  local key = var[self.header_var]
  if (key == nil or key == "") and self.query then
    local raw = var[self.query_var]
    if raw and raw ~= "" then
      key = ngx.unescape_uri(raw)
    end
  end
  if key == nil or key == "" then
    return util.deny(401)
  end
  local consumer = consumers.by_key(self.ns, crypto.sha256_hex(key))
  if not consumer then
    util.log_every("key-auth:" .. self.ns, ngx.INFO, "portico: key-auth ", self.name, ": unknown key")
    return util.deny(401)
  end
  consumers.identify(ctx, consumer)
  if self.hide then
    ngx.req.clear_header(self.header)
    if self.query then
      local args = ngx.req.get_uri_args(0)
      if args[self.query] ~= nil then
        args[self.query] = nil
        ngx.req.set_uri_args(args)
      end
    end
  end
  return false
end

function _M.new(conf)
  local header = conf.header or "apikey"
  return {
    ns = conf.namespace,
    name = conf.name or "",
    header = header,
    header_var = util.header_var(header),
    query = conf.query,
    query_var = conf.query and ("arg_" .. conf.query) or nil,
    hide = conf.hideCredentials ~= false,
    access = access,
  }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, header_name, bool_or_nil = C.str, C.header_name, C.bool_or_nil

-- The key-auth fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  local err = C.namespace(p.namespace)
  if err then return err end
  if p.header ~= nil and not header_name(p.header) then return "invalid header" end
  if p.query ~= nil and not str(p.query, 256, "^[%w%-%._~]+$") then return "invalid query parameter name" end
  if not bool_or_nil(p.hideCredentials) then return "hideCredentials must be a boolean" end
end

return _M
