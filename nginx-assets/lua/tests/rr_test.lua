-- Unit tests for the pure smooth weighted round-robin (run with luajit, no nginx).
package.path = arg[1] .. "/?.lua;" .. package.path
local rr = require("portico.rr")

local failures = 0
local function check(name, cond, msg)
  if cond then print("ok - " .. name) else failures = failures + 1; print("not ok - " .. name .. ": " .. (msg or "")) end
end

-- weights 5,1,1: the smooth sequence interleaves the light peers instead of bunching the heavy one
local b = rr.new({ { address = "a", port = 1, weight = 5 }, { address = "b", port = 1, weight = 1 }, { address = "c", port = 1, weight = 1 } })
local seq = {}
for _ = 1, 7 do seq[#seq + 1] = b:next().address end
check("smooth 5:1:1 sequence", table.concat(seq) == "aabacaa", table.concat(seq))

-- distribution over many picks follows the weights exactly
local w = rr.new({ { address = "x", port = 1, weight = 3 }, { address = "y", port = 1, weight = 1 } })
local counts = { x = 0, y = 0 }
for _ = 1, 4000 do local p = w:next(); counts[p.address] = counts[p.address] + 1 end
check("3:1 distribution", counts.x == 3000 and counts.y == 1000, counts.x .. "/" .. counts.y)

-- equal weights visit every peer once per round
local e = rr.new({ { address = "p", port = 1 }, { address = "q", port = 1 }, { address = "r", port = 1 } })
local round = {}
for _ = 1, 3 do round[e:next().address] = true end
check("equal weights round covers all peers", round.p and round.q and round.r)

-- skip (retry on another peer) never returns a skipped peer while another exists
local s = rr.new({ { address = "1", port = 1 }, { address = "2", port = 1 } })
local skipped = 0
for _ = 1, 100 do
  local p = s:next(function(x) return x.address == "1" end)
  if p.address == "1" then skipped = skipped + 1 end
end
check("skip honoured", skipped == 0)

-- zero weight and empty sets
check("zero-weight peers are excluded", rr.new({ { address = "z", port = 1, weight = 0 } }):next() == nil)
check("empty backend gives nil", rr.new({}):next() == nil)
check("single peer skipped gives nil", rr.new({ { address = "o", port = 1 } }):next(function() return true end) == nil)

if failures > 0 then os.exit(1) end
