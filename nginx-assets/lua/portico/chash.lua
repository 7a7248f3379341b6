-- Consistent hashing on a ring of virtual nodes (pure Lua + LuaJIT's bit library, unit-tested with luajit).
-- Adding one endpoint to N moves about 1/(N+1) of the keys; the rest keep their endpoint.
local bit = require("bit")
local bxor, tobit, rshift = bit.bxor, bit.tobit, bit.rshift

local _M = {}
_M.__index = _M

local VNODES = 160

-- Exact 32-bit multiplication with doubles (every intermediate stays below 2^53).
local function mul32(a, b)
  a = a % 4294967296
  local al, ah = a % 65536, math.floor(a / 65536)
  return tobit(al * b + ((ah * b) % 65536) * 65536)
end

-- FNV-1a 32 bit followed by murmur3's finalizer (FNV alone clusters on keys that differ in their last bytes),
-- as an unsigned number.
local function fnv1a(s)
  local h = tobit(2166136261)
  for i = 1, #s do
    h = mul32(bxor(h, s:byte(i)), 16777619)
  end
  h = bxor(h, rshift(h, 16))
  h = mul32(h, 0x85ebca6b)
  h = bxor(h, rshift(h, 13))
  h = mul32(h, 0xc2b2ae35)
  h = bxor(h, rshift(h, 16))
  return h % 4294967296
end
_M.hash = fnv1a

function _M.new(endpoints)
  local ring = {}
  for i = 1, #endpoints do
    local e = endpoints[i]
    local id = e.address .. ":" .. e.port
    for v = 1, VNODES do ring[#ring + 1] = { h = fnv1a(id .. "#" .. v), peer = e } end
  end
  table.sort(ring, function(a, b) return a.h < b.h end)
  return setmetatable({ ring = ring, n = #endpoints }, _M)
end

function _M:size() return self.n end

-- The endpoint owning `key` (first vnode clockwise); skip(peer) → walk on to the next distinct endpoint.
function _M:find(key, skip)
  local ring = self.ring
  local len = #ring
  if len == 0 then return nil end
  local h = fnv1a(key or "")
  local lo, hi = 1, len
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if ring[mid].h < h then lo = mid + 1 else hi = mid end
  end
  if ring[lo].h < h then lo = 1 end
  for i = 0, len - 1 do
    local p = ring[(lo - 1 + i) % len + 1].peer
    if not (skip and skip(p)) then return p end
  end
  return nil
end

return _M
