-- Smooth weighted round-robin (the interleaving nginx uses for weighted upstreams): pure Lua, no ngx API, so it
-- is unit-tested with plain luajit. Each pick raises every peer's current weight by its weight, takes the peer
-- with the highest current weight and lowers it by the total: weights 5,1,1 give a a b a c a a, not a a a a a b c.
local _M = {}
_M.__index = _M

function _M.new(endpoints)
  local peers, total = {}, 0
  for i = 1, #endpoints do
    local e = endpoints[i]
    local w = tonumber(e.weight) or 1
    if w > 0 then
      peers[#peers + 1] = { address = e.address, port = e.port, weight = w, current = 0 }
      total = total + w
    end
  end
  return setmetatable({ peers = peers, total = total }, _M)
end

-- Returns the next peer, skipping peers for which skip(peer) is true (e.g. already tried for this request).
function _M:next(skip)
  local peers = self.peers
  local n = #peers
  if n == 0 then return nil end
  if n == 1 then
    local p = peers[1]
    if skip and skip(p) then return nil end
    return p
  end
  local best
  local total = 0
  for i = 1, n do
    local p = peers[i]
    if not (skip and skip(p)) then
      p.current = p.current + p.weight
      total = total + p.weight
      if not best or p.current > best.current then best = p end
    end
  end
  if best then best.current = best.current - total end
  return best
end

function _M:size()
  return #self.peers
end

return _M
