package.path = arg[1] .. "/?.lua;" .. package.path
local ewma = require("portico.ewma")
local failures = 0
local function check(name, cond, msg)
  if cond then print("ok - " .. name) else failures = failures + 1; print("not ok - " .. name .. ": " .. (msg or "")) end
end
local eps = { { address = "fast", port = 1 }, { address = "slow", port = 1 }, { address = "mid", port = 1 } }
local b = ewma.new(eps, 10)
-- Park-Miller minimal standard generator: its low bits are as good as its high bits, unlike a power-of-two LCG
-- whose low bits alternate (with `seed % n`, two consecutive draws are correlated and the pair of peers is almost
-- never random).
local seed = 12345
local function rand(n) seed = (seed * 16807) % 2147483647; return math.floor(seed / 2147483647 * n) + 1 end
-- Teach it: fast answers in 5 ms, mid in 50 ms, slow in 500 ms.
for t = 1, 50 do
  b:observe("fast:1", 0.005, t * 0.01); b:observe("mid:1", 0.05, t * 0.01); b:observe("slow:1", 0.5, t * 0.01)
end
local counts = { fast = 0, mid = 0, slow = 0 }
for _ = 1, 3000 do
  local p = b:pick(0.5, rand)
  counts[p.address] = counts[p.address] + 1
end
local shown = counts.fast .. "/" .. counts.mid .. "/" .. counts.slow
-- Two distinct random peers of three, the better one wins: fast wins every pair it is in (2/3 of the pairs), mid
-- wins the pair (mid, slow) (1/3), slow never wins. Binomial sd for 3000 draws at p=1/3 is about 26.
check("fast peer wins the pairs it is drawn in (about 2/3)", counts.fast >= 1850 and counts.fast <= 2150, shown)
check("mid wins only against slow (about 1/3)", counts.mid >= 850 and counts.mid <= 1150, shown)
check("slow never wins a pair", counts.slow == 0, shown)
-- Decay: after a long quiet period every score falls back to "unknown", ties go to the first draw, so picks are
-- uniform again.
local later = { fast = 0, mid = 0, slow = 0 }
for i = 1, 3000 do local p = b:pick(1000 + i, rand); later[p.address] = later[p.address] + 1 end
local shown2 = later.fast .. "/" .. later.mid .. "/" .. later.slow
check("scores decay: every peer gets about a third again", later.fast >= 850 and later.fast <= 1150 and later.mid >= 850 and later.mid <= 1150 and later.slow >= 850 and later.slow <= 1150, shown2)
local skipped = 0
for _ = 1, 200 do if b:pick(0.5, rand, function(p) return p.address == "fast" end).address == "fast" then skipped = skipped + 1 end end
check("skip honoured", skipped == 0, skipped)
check("empty", ewma.new({}, 10):pick(0, rand) == nil)
print("# picks at t=0.5: " .. shown .. "; after decay: " .. shown2)
if failures > 0 then os.exit(1) end
