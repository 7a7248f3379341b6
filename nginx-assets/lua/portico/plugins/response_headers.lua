-- response-headers: changes the response to the client, in the header filter (also on Portico's own answers: 401,
-- 429, the 204 preflight...). Literal values (nothing is interpreted as an nginx variable), applied in this order:
-- remove, then set (replace or create), then add (keep existing values, append one more).
local util = require("portico.plugins.util")
local C = require("portico.check")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "response-headers"
_M.order = 10

local as_list = util.as_list

local function header_filter(self)
  local out = ngx.header
  for _, name in ipairs(self.remove) do out[name] = nil end
  for _, h in ipairs(self.set) do out[h.name] = h.value end
  for _, h in ipairs(self.add) do
    local list = as_list(out[h.name])
    local copy = {}
    for i = 1, #list do copy[i] = list[i] end
    copy[#copy + 1] = h.value
    out[h.name] = copy
  end
end

function _M.new(conf)
  return { set = conf.set or {}, add = conf.add or {}, remove = conf.remove or {}, header_filter = header_filter }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local array_of, header_name, name_values, FRAMING = C.array_of, C.header_name, C.name_values, C.FRAMING

-- The response-headers fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  for _, what in ipairs({ "set", "add" }) do
    if p[what] ~= nil and not name_values(p[what], {}) then return "invalid " .. what .. " (header names, printable values; framing headers cannot be set)" end
  end
  if p.remove ~= nil and not array_of(p.remove, 64, function(h) return header_name(h) and not FRAMING[h] end) then return "invalid remove" end
end

return _M
