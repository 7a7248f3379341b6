-- request-headers / response-headers: literal values (nothing is interpreted as an nginx variable), applied in
-- this order: remove, then set (replace or create), then add (keep existing values, append one more).
--   request-headers   on the request proxied upstream, in the access phase (after auth: an auth plugin's
--                     X-Consumer-Username can be overwritten by a configured value on purpose);
--   response-headers  on the response to the client, in the header filter (also on Portico's own answers:
--                     401, 429, the 204 preflight...).
local _M = {}

local function as_list(v)
  if v == nil then return {} end
  if type(v) == "table" then return v end
  return { v }
end

local function request(self)
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

local function response(self)
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
  local self = { set = conf.set or {}, add = conf.add or {}, remove = conf.remove or {} }
  if conf.type == "response-headers" then self.header_filter = response else self.access = request end
  return self
end

return _M
