package.path = arg[1] .. "/?.lua;" .. package.path
local ewma = require("portico.ewma")
local failures = 0
local function check(name, cond, msg)
  if cond then print("ok - " .. name) else failures = failures + 1; print("not ok - " .. name .. ": " .. (msg or "")) end
end
local eps = { { address = "fast", port = 1 }, { address = "slow", port = 1 }, { address = "mid", port = 1 } }
local b = ewma.new(eps, 10)
local seed = 1
local function rand(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n + 1 end
-- Teach it: fast answers in 5 ms, mid in 50 ms, slow in 500 ms.
for t = 1, 50 do
  b:observe("fast:1", 0.005, t * 0.01); b:observe("mid:1", 0.05, t * 0.01); b:observe("slow:1", 0.5, t * 0.01)
end
local counts = { fast = 0, mid = 0, slow = 0 }
for _ = 1, 3000 do counts[b:pick(0.5, rand).address] = counts[b:pick(0.5, rand).address] + 1 end
check("fast peer preferred", counts.fast > counts.mid and counts.mid > counts.slow, counts.fast .. "/" .. counts.mid .. "/" .. counts.slow)
check("slow peer rarely chosen (only when drawn against nothing better)", counts.slow == 0, tostring(counts.slow))
-- Decay: after a long quiet period the scores fall back and all peers are tried again.
local later = { fast = 0, mid = 0, slow = 0 }
for i = 1, 3000 do local p = b:pick(1000 + i, rand); later[p.address] = later[p.address] + 1 end
check("scores decay, every peer tried again", later.slow > 0 and later.mid > 0, later.fast .. "/" .. later.mid .. "/" .. later.slow)
check("skip honoured", b:pick(0.5, rand, function(p) return p.address == "fast" end).address ~= "fast")
check("empty", ewma.new({}, 10):pick(0, rand) == nil)
if failures > 0 then os.exit(1) end
