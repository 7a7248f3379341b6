-- Hashes the auth plugins need, through libraries nginx already links (no Lua crypto code):
--   sha256 / sha256_hex  OpenSSL's libcrypto (SHA256), by LuaJIT FFI;
--   sha1_base64          ngx.sha1_bin + ngx.encode_base64 (htpasswd "{SHA}");
--   bcrypt               libxcrypt's crypt_rn ("$2a$", "$2b$", "$2y$", and the crypt(3) schemes "$1$", "$5$", "$6$",
--                        DES), which Debian's libcrypt.so.1 implements — never for a cost over the bounds below;
--   equal                comparison whose time does not depend on where two strings differ;
--   md5_hex              lower-case hex of MD5 (HTTP Digest authentication, RFC 7616's MD5 algorithm);
--   random_bytes         OpenSSL's RAND_bytes (digest_auth.lua's nonce key and nonces).
-- bcrypt is slow by design and runs on the nginx worker's event loop, so basic_auth.lua caches verified
-- passwords and bounds how many it computes per second (see there).
local ffi = require("ffi")

local _M = {}

ffi.cdef [[
unsigned char *SHA256(const unsigned char *d, size_t n, unsigned char *md);
unsigned char *MD5(const unsigned char *d, size_t n, unsigned char *md);
int RAND_bytes(unsigned char *buf, int num);
char *crypt_rn(const char *phrase, const char *setting, void *data, int size);
]]

-- nginx links libcrypto and libcrypt, so their symbols are usually in the process already (ffi.C); plain luajit
-- (unit tests) loads them by name.
local function lib(names, symbol)
  local ok = pcall(function() return ffi.C[symbol] end)
  if ok then return ffi.C end
  local last
  for _, n in ipairs(names) do
    local okl, l = pcall(ffi.load, n)
    if okl then
      local oks = pcall(function() return l[symbol] end)
      if oks then return l end
    end
    last = l
  end
  error("portico: cannot load " .. table.concat(names, " or ") .. " for " .. symbol .. ": " .. tostring(last))
end

local libcrypto, libcrypt
local digest = ffi.new("unsigned char[32]")

function _M.sha256(s)
  libcrypto = libcrypto or lib({ "libcrypto.so.3", "crypto" }, "SHA256")
  libcrypto.SHA256(s, #s, digest)
  return ffi.string(digest, 32)
end

-- Hex by a byte loop over an FFI buffer: the JIT compiles it (string.gsub with a table or callback does not, and
-- cost about 3 µs per digest, more than the rest of key-auth).
local DIGITS = ffi.new("const char[16]", "0123456789abcdef")
local hexbuf = ffi.new("char[?]", 128)
local byte = string.byte
local rshift, band = bit.rshift, bit.band

function _M.hex(bin)
  local n = #bin
  local buf = n <= 64 and hexbuf or ffi.new("char[?]", 2 * n)
  for i = 0, n - 1 do
    local b = byte(bin, i + 1)
    buf[2 * i] = DIGITS[rshift(b, 4)]
    buf[2 * i + 1] = DIGITS[band(b, 15)]
  end
  return ffi.string(buf, 2 * n)
end

-- Lower-case hex of SHA-256(s): what ConsumerEntry.keys holds. Keys presented again are answered from a per-worker
-- table (bounded: emptied when it reaches 4,096 entries), so a steady client costs one table lookup.
local seen, seen_n = {}, 0
function _M.sha256_hex(s)
  local h = seen[s]
  if h then return h end
  h = _M.hex(_M.sha256(s))
  if seen_n >= 4096 then seen, seen_n = {}, 0 end
  seen[s], seen_n = h, seen_n + 1
  return h
end

-- Base64 of SHA-1(s): the part of an htpasswd "{SHA}..." hash after the prefix.
function _M.sha1_base64(s)
  return ngx.encode_base64(ngx.sha1_bin(s))
end

-- libxcrypt's struct crypt_data is 32768 bytes; one scratch area per worker (calls never overlap: no yield).
local CRYPT_DATA = 32768
local scratch

-- The cost a hash's writer chooses runs on the worker's event loop: bcrypt cost 31 or "$6$rounds=999999999$" would
-- block every request of the worker for hours (29 h) or minutes. The controller refuses such hashes
-- (reconcilers/config/password-hash.ts, same numbers: a unit test keeps them equal) and validate.lua refuses them
-- at the configuration API; crypt() below refuses them once more, so no path runs one. Both bounds are about 0.2 s
-- on a 2-core reference machine.
_M.MAX_BCRYPT_COST = 12
_M.MAX_SHA_CRYPT_ROUNDS = 500000

-- The scheme and cost of a crypt(3) setting or hash ("2b", 10), ("6", 5000), ("1"), ("des"); nil and why when
-- Portico does not run it (an unknown scheme, or a cost out of bounds).
function _M.crypt_work(setting)
  if type(setting) ~= "string" then return nil, "not a string" end
  local v, cost = setting:match("^%$(2[aby])%$(%d%d)%$")
  if v then
    cost = tonumber(cost)
    if cost < 4 or cost > _M.MAX_BCRYPT_COST then return nil, "bcrypt cost " .. cost .. " out of bounds" end
    return v, cost
  end
  v = setting:match("^%$([56])%$")
  if v then
    local rest = setting:sub(4)
    if rest:sub(1, 7) ~= "rounds=" then return v, 5000 end
    local r = rest:match("^rounds=([1-9]%d?%d?%d?%d?%d?%d?%d?%d?%d?)%$")
    r = tonumber(r)
    if not r or r < 1000 or r > _M.MAX_SHA_CRYPT_ROUNDS then return nil, "sha-crypt rounds out of bounds" end
    return v, r
  end
  if setting:match("^%$1%$") then return "1" end
  if #setting == 13 and setting:match("^[./%w]+$") then return "des" end
  return nil, "unsupported scheme"
end

-- What verifying against `hash` costs, as a key: hashes with equal keys take the same time to check.
local function work_key(hash)
  if hash:sub(1, 7) == "sha256$" then return "sha256" end
  if hash:sub(1, 5) == "{SHA}" then return "sha1" end
  if hash:sub(1, 6) == "$apr1$" then return "apr1" end
  local v, cost = _M.crypt_work(hash)
  if not v then return "other" end
  if v:sub(1, 1) == "2" then v = "2" end -- $2a$, $2b$, $2y$: the same work
  return v .. ":" .. tostring(cost or "")
end

-- The first hash of `hashes` (a list) with the most common cost (ties: the cost that reached that count first), or
-- nil for an empty list.
-- basic-auth checks the password of an unknown user against it, so that an unknown user costs what a known one
-- typically does and the answer's timing does not tell which users exist.
function _M.typical(hashes)
  local count, first, best, best_n = {}, {}, nil, 0
  for _, h in ipairs(hashes) do
    if type(h) == "string" then
      local k = work_key(h)
      count[k] = (count[k] or 0) + 1
      if not first[k] then first[k] = h end
      if count[k] > best_n then best, best_n = k, count[k] end
    end
  end
  return best and first[best] or nil
end

-- crypt(3) of password with the settings (salt, cost) taken from `hash`; nil when the library refuses them, or
-- when Portico does (crypt_work).
function _M.bcrypt(password, hash)
  if not _M.crypt_work(hash) then return nil end
  libcrypt = libcrypt or lib({ "libcrypt.so.1", "crypt" }, "crypt_rn")
  scratch = scratch or ffi.new("char[?]", CRYPT_DATA)
  local out = libcrypt.crypt_rn(password, hash, scratch, CRYPT_DATA)
  if out == nil then return nil end
  local s = ffi.string(out)
  if s:sub(1, 1) == "*" then return nil end -- libxcrypt's failure token
  return s
end

local md5buf = ffi.new("unsigned char[16]")
function _M.md5(s)
  libcrypto = libcrypto or lib({ "libcrypto.so.3", "crypto" }, "SHA256")
  libcrypto.MD5(s, #s, md5buf)
  return ffi.string(md5buf, 16)
end

-- Lower-case hex of MD5(s): HTTP Digest's H() (digest_auth.lua).
function _M.md5_hex(s)
  return _M.hex(_M.md5(s))
end

-- n bytes from OpenSSL's CSPRNG; nil when it fails (the caller fails closed).
function _M.random_bytes(n)
  libcrypto = libcrypto or lib({ "libcrypto.so.3", "crypto" }, "SHA256")
  local buf = ffi.new("unsigned char[?]", n)
  if libcrypto.RAND_bytes(buf, n) ~= 1 then return nil end
  return ffi.string(buf, n)
end

-- Apache's "$apr1$" MD5-crypt (htpasswd's default): the md5crypt algorithm with the "$apr1$" magic, 1,000 rounds.
-- Written from the algorithm's description (FreeBSD md5crypt as used by APR); checked against `openssl passwd -apr1`.
local ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
local function to64(v, n)
  local out = {}
  for i = 1, n do
    local k = v % 64
    out[i] = ITOA64:sub(k + 1, k + 1)
    v = math.floor(v / 64)
  end
  return table.concat(out)
end

function _M.apr1(password, salt)
  local magic = "$apr1$"
  salt = salt:sub(1, 8)
  local md5 = _M.md5
  local alt = md5(password .. salt .. password)
  local ctx = { password, magic, salt }
  local pl = #password
  while pl > 0 do
    ctx[#ctx + 1] = alt:sub(1, pl > 16 and 16 or pl)
    pl = pl - 16
  end
  local i = #password
  while i > 0 do
    ctx[#ctx + 1] = (i % 2 == 1) and "\0" or password:sub(1, 1)
    i = math.floor(i / 2)
  end
  local final = md5(table.concat(ctx))
  for r = 0, 999 do
    local c = {}
    c[#c + 1] = (r % 2 == 1) and password or final
    if r % 3 ~= 0 then c[#c + 1] = salt end
    if r % 7 ~= 0 then c[#c + 1] = password end
    c[#c + 1] = (r % 2 == 1) and final or password
    final = md5(table.concat(c))
  end
  local b = { final:byte(1, 16) }
  return magic .. salt .. "$" .. to64(b[1] * 65536 + b[7] * 256 + b[13], 4) .. to64(b[2] * 65536 + b[8] * 256 + b[14], 4)
    .. to64(b[3] * 65536 + b[9] * 256 + b[15], 4) .. to64(b[4] * 65536 + b[10] * 256 + b[16], 4)
    .. to64(b[5] * 65536 + b[11] * 256 + b[6], 4) .. to64(b[12], 2)
end

-- Constant-time equality for equal-length strings (digests); a length mismatch is not secret here.
local bit = require("bit")
local byte, bxor, bor = string.byte, bit.bxor, bit.bor
function _M.equal(a, b)
  if type(a) ~= "string" or type(b) ~= "string" or #a ~= #b then return false end
  local acc = 0
  for i = 1, #a do acc = bor(acc, bxor(byte(a, i), byte(b, i))) end
  return acc == 0
end

-- The password hash formats the data plane checks against (basic-auth users, consumers' basic credentials; what
-- validate.lua accepts): sha256$<salt hex>$<64 hex>, {SHA}<base64>, and bcrypt and (in htpasswd files, ingress-nginx
-- auth-secret) crypt(3) md5/sha256/sha512 and traditional DES — only within the cost bounds (crypt_work), so a
-- configuration that bypassed the controller cannot stall a worker.
local HASHES = {
  function(h) -- sha256$<salt hex>$<64 hex>
    local salt, hex = h:match("^sha256%$(%x+)%$(%x+)$")
    return salt ~= nil and #salt <= 128 and #hex == 64
  end,
  function(h) return #h == 33 and h:match("^{SHA}[%w+/]+=*$") ~= nil end,
  function(h) return #h == 60 and h:match("^%$2[aby]%$%d%d%$[./%w]+$") ~= nil and _M.crypt_work(h) ~= nil end,
  function(h) return #h <= 64 and h:match("^%$apr1%$[./%w]+%$[./%w]+$") ~= nil end,
  function(h) return #h <= 256 and h:match("^%$[156]%$[^:%s]+$") ~= nil and _M.crypt_work(h) ~= nil end,
  function(h) return #h == 13 and h:match("^[./%w]+$") ~= nil end,
}
function _M.known_hash(h)
  if type(h) ~= "string" then return false end
  for _, f in ipairs(HASHES) do
    if f(h) then return true end
  end
  return false
end

return _M
