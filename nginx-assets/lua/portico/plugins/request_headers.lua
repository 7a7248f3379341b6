-- request-headers: changes the request proxied upstream, in the access phase (after auth: an auth plugin's
-- X-Consumer-Username can be overwritten by a configured value on purpose). Literal values (nothing is interpreted
-- as an nginx variable), applied in this order: remove, then set (replace or create), then add (keep existing
-- values, append one more). response-headers does the same to the response.
local util = require("portico.plugins.util")
local C = require("portico.check")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "request-headers"
_M.order = 9

local as_list = util.as_list

local function access(self)
  local req = ngx.req
  for _, name in ipairs(self.remove) do req.clear_header(name) end
  for _, h in ipairs(self.set) do req.set_header(h.name, h.value) end
  if #self.add > 0 then
    local current = ngx.req.get_headers(0)
    for _, h in ipairs(self.add) do
      local list = as_list(current[h.name])
      local copy = {}
      for i = 1, #list do copy[i] = list[i] end
      copy[#copy + 1] = h.value
      req.set_header(h.name, copy)
      current[h.name] = copy
    end
  end
  return false
end

function _M.new(conf)
  return { set = conf.set or {}, add = conf.add or {}, remove = conf.remove or {}, access = access }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local array_of, header_name, name_values, FRAMING, REQUEST_ONLY = C.array_of, C.header_name, C.name_values, C.FRAMING, C.REQUEST_ONLY

-- The request-headers fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  for _, what in ipairs({ "set", "add" }) do
    if p[what] ~= nil and not name_values(p[what], REQUEST_ONLY) then return "invalid " .. what .. " (header names, printable values; framing headers and Host cannot be set)" end
  end
  if p.remove ~= nil and not array_of(p.remove, 64, function(h) return header_name(h) and not FRAMING[h] and not REQUEST_ONLY[h] end) then return "invalid remove" end
end

return _M
