-- Latency-aware balancing (EWMA with power of two choices), pure Lua so it is unit-tested with luajit: each peer
-- keeps an exponentially weighted moving average of its response time that decays toward "unknown" (0) over
-- `decay` seconds without samples; a pick draws two distinct peers and takes the one with the lower score.
local _M = {}
_M.__index = _M

function _M.new(endpoints, decay)
  local peers, byaddr = {}, {}
  for i = 1, #endpoints do
    local e = endpoints[i]
    local p = { address = e.address, port = e.port, ewma = 0, last = 0 }
    peers[#peers + 1] = p
    byaddr[e.address .. ":" .. e.port] = p
  end
  return setmetatable({ peers = peers, byaddr = byaddr, decay = decay or 10 }, _M)
end

function _M:size() return #self.peers end

local function score(self, p, now)
  local dt = now - p.last
  if dt <= 0 then return p.ewma end
  return p.ewma * math.exp(-dt / self.decay)
end

-- rand(n) returns an integer in [1, n]; skip(peer) excludes peers (retries).
function _M:pick(now, rand, skip)
  local cand = {}
  for i = 1, #self.peers do
    local p = self.peers[i]
    if not (skip and skip(p)) then cand[#cand + 1] = p end
  end
  local n = #cand
  if n == 0 then return nil end
  if n == 1 then return cand[1] end
  local a = rand(n)
  local b = rand(n - 1)
  if b >= a then b = b + 1 end
  local pa, pb = cand[a], cand[b]
  -- Scores within a millisecond count as equal (the first, random draw wins), so decayed peers get traffic again.
  if score(self, pb, now) + 0.001 < score(self, pa, now) then return pb end
  return pa
end

-- Records one response time (seconds) for "address:port".
function _M:observe(addr, rtt, now)
  local p = self.byaddr[addr]
  if not p then return end
  local w = math.exp(-(now - p.last) / self.decay)
  p.ewma = p.ewma * w + rtt * (1 - w)
  p.last = now
end

function _M:next(skip)
  return self:pick(ngx.now(), math.random, skip)
end

return _M
