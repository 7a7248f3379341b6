-- Which endpoint addresses may become nginx peers. Endpoints come from what tenants control (EndpointSlices,
-- ExternalName DNS answers); the control plane filters them and this is the second end: only IP literals, never
-- loopback (127/8, ::1), unspecified (0/8, ::), link-local (169.254/16, fe80::/10) or a cloud metadata / host
-- agent address outside link-local (Alibaba's 100.100.100.200, Azure's 168.63.129.16), including their IPv4-mapped
-- IPv6 forms, and never a host name or "unix:" path (nginx's URL parser would accept both). Pure Lua, no ngx API.
local bit = require("bit")
local band = bit.band

local _M = {}

local function octets(s)
  local a, b, c, d = s:match("^(%d%d?%d?)%.(%d%d?%d?)%.(%d%d?%d?)%.(%d%d?%d?)$")
  if not a then return nil end
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if a > 255 or b > 255 or c > 255 or d > 255 then return nil end
  return a, b, c, d
end

local function v4_refused(a, b, c, d)
  if a == 127 then return "loopback" end
  if a == 0 then return "unspecified" end
  if a == 169 and b == 254 then return "link-local" end
  if (a == 100 and b == 100 and c == 100 and d == 200) or (a == 168 and b == 63 and c == 129 and d == 16) then return "metadata" end
  return nil
end

-- Hex groups of one side of "::" (nil when a group is not 1-4 hex digits).
local function groups(s, out)
  if s == "" then return out end
  for g in (s .. ":"):gmatch("([^:]*):") do
    if not g:match("^%x%x?%x?%x?$") then return nil end
    out[#out + 1] = tonumber(g, 16)
  end
  return out
end

-- An IPv6 literal (no brackets, no zone) as 8 numbers, or nil.
local function v6(s)
  if #s > 45 or not s:find(":", 1, true) then return nil end
  local tail
  local pre, dotted = s:match("^(.*:)(%d+%.%d+%.%d+%.%d+)$")
  if pre then
    local a, b, c, d = octets(dotted)
    if not a then return nil end
    tail = { a * 256 + b, c * 256 + d }
    s = pre .. "0:0"
  end
  local g
  local dbl = s:find("::", 1, true)
  if dbl then
    if s:find("::", dbl + 1, true) then return nil end
    local left, right = groups(s:sub(1, dbl - 1), {}), groups(s:sub(dbl + 2), {})
    if not left or not right or #left + #right > 7 then return nil end
    g = left
    for _ = 1, 8 - #left - #right do g[#g + 1] = 0 end
    for i = 1, #right do g[#g + 1] = right[i] end
  else
    g = groups(s, {})
    if not g or #g ~= 8 then return nil end
  end
  if tail then g[7], g[8] = tail[1], tail[2] end
  return g
end

local function v6_refused(g)
  local high_zero = g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0
  if high_zero and g[6] == 0 and g[7] == 0 then
    if g[8] == 0 then return "unspecified" end
    if g[8] == 1 then return "loopback" end
  end
  if band(g[1], 0xffc0) == 0xfe80 then return "link-local" end
  -- IPv4-mapped (::ffff:a.b.c.d) and the old IPv4-compatible form (::a.b.c.d) reach the IPv4 address.
  if high_zero and (g[6] == 0xffff or g[6] == 0) then
    return v4_refused(math.floor(g[7] / 256), g[7] % 256, math.floor(g[8] / 256), g[8] % 256)
  end
  return nil
end

-- Returns the host to hand nginx (IPv6 in brackets, as nginx's URL parser wants it) or nil and why not.
function _M.check(address)
  if type(address) ~= "string" then return nil, "not an IP address" end
  local a, b, c, d = octets(address)
  if a then
    local why = v4_refused(a, b, c, d)
    if why then return nil, why end
    return address
  end
  local inner = address:match("^%[(.+)%]$") or address
  local g = v6(inner)
  if not g then return nil, "not an IP address" end
  local why = v6_refused(g)
  if why then return nil, why end
  return "[" .. inner .. "]"
end

function _M.valid_port(p)
  return type(p) == "number" and p >= 1 and p <= 65535 and p % 1 == 0
end

-- The literal parsers, for modules that match client addresses (plugins/ip_restriction.lua).
_M.ipv4_octets = octets
_M.ipv6_groups = v6

return _M
