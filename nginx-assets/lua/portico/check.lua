-- Small shape checks shared by validate.lua (the configuration API's boundary check) and the plugin modules'
-- own `check` functions (portico/plugins/*.lua): each returns true/false or, for the named ones, nil when the
-- value is fine, else a message.
local cjson = require("cjson.safe")

local _M = {}

function _M.is_array(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" then return false end
    n = n + 1
  end
  return n == #t
end
local is_array = _M.is_array

function _M.is_int(v, min, max)
  return type(v) == "number" and v % 1 == 0 and v >= min and v <= max
end

function _M.str(v, max, pattern)
  return type(v) == "string" and #v > 0 and #v <= max and (not pattern or v:match(pattern) ~= nil)
end
local str = _M.str

function _M.array_of(v, max, each)
  if not is_array(v) or #v > max then return false end
  for i = 1, #v do
    if not each(v[i]) then return false end
  end
  return true
end

function _M.bool_or_nil(v) return v == nil or type(v) == "boolean" end
function _M.refusal_status(v) return v == nil or _M.is_int(v, 400, 599) end
function _M.timeout(v) return type(v) == "number" and v > 0 and v <= 1e6 end

-- Whether PCRE (ngx.re, as the router and plugins use it) compiles the pattern.
function _M.compiles(pattern)
  local ok, _, err = pcall(ngx.re.find, "", pattern, "j")
  return ok and err == nil
end

_M.ID = "^[a-z0-9][a-z0-9_.-]*$"
-- RFC 6265 cookie-name token: it is written into a Set-Cookie header, so nothing that could end the header.
_M.TOKEN = "^[%w!#%$%%&'%*%+%.%^_`|~%-]+$"
-- Plugin ids ("<namespace>_<name>" and the like) and header names (lower-case RFC 9110 tokens).
_M.PLUGIN_ID = "^[a-z0-9][a-z0-9_.-]*$"
_M.HEADER = "^[a-z0-9!#%$%%&'%*%+%.%^_`|~%-]+$"
-- Header values: printable ASCII (and tab), never CR/LF — they are sent literally. May be empty.
_M.VALUE = "^[\t\32-\126]*$"
_M.NAMESPACE = "^[a-z0-9][a-z0-9-]*$"
-- A URI path (as nginx has it in $uri or sends it): RFC 3986 path characters and percent.
_M.PATH = "^/[%w%-%._~!%$&'%(%)%*%+,;=:@/%%]*$"

-- Headers whose values frame the message or the connection: a plugin must not change them.
_M.FRAMING = { ["content-length"] = true, ["transfer-encoding"] = true, ["connection"] = true, ["keep-alive"] = true,
  ["upgrade"] = true, ["te"] = true, ["trailer"] = true, ["proxy-connection"] = true }
_M.REQUEST_ONLY = { ["host"] = true, ["expect"] = true }
_M.REDIRECT_STATUS = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }

function _M.header_name(v) return str(v, 256, _M.HEADER) end

function _M.backend_id(id)
  if not str(id, 512, _M.ID) then return "invalid backend id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

function _M.namespace(ns)
  if not str(ns, 63, _M.NAMESPACE) or ns:sub(-1) == "-" then return "invalid namespace " .. cjson.encode(tostring(ns):sub(1, 80)) end
end

-- redirect / rewrite: { from, to } paths.
function _M.prefix_pair(p)
  return type(p) == "table" and str(p.from, 2048, _M.PATH) and str(p.to, 2048, _M.PATH)
end

-- request-headers / response-headers: [{ name, value }] of header names (none of `forbidden` or FRAMING) and
-- printable values.
function _M.name_values(list, forbidden)
  if not is_array(list) or #list > 64 then return false end
  for _, h in ipairs(list) do
    if type(h) ~= "table" or not _M.header_name(h.name) or forbidden[h.name] or _M.FRAMING[h.name] then return false end
    if type(h.value) ~= "string" or #h.value > 4096 or not h.value:match(_M.VALUE) then return false end
  end
  return true
end

return _M
