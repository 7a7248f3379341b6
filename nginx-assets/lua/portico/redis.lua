-- A small Redis client over ngx.socket.tcp cosockets (RESP2), for the rate-limit plugin's shared counters
-- (policy "redis"): no C module, no Lua script run by Redis. It only sends a few commands at a time, pipelined, on
-- a connection from the worker's keepalive pool, and reads their replies. Cosockets only work where a request may
-- yield (the access phase, timers), never in set_by_lua: the plugin engine runs chains with such a plugin in the
-- plugin location's access phase (plugins.lua).
--
-- Replies: status ("+OK") as the string, integer (":5") as a number, bulk ("$3\r\nabc") as the string or
-- ngx.null when absent ("$-1"), array ("*2\r\n...") as a table, error ("-ERR ...") as `false, message`. What a
-- reply may hold is bounded (bulk strings of at most 64 KiB, arrays of at most 64 elements, nesting 2): a reply
-- beyond that is a protocol error, and the connection is closed rather than reused.
local _M = {}

local concat = table.concat
local tonumber = tonumber

-- Redis's "nil" (a missing key's GET): ngx.null, or a sentinel of this module where ngx has none (unit tests).
local NULL = ngx.null
if NULL == nil then NULL = setmetatable({}, { __tostring = function() return "null" end }) end
_M.null = NULL

local MAX_BULK = 64 * 1024
local MAX_ARRAY = 64
local MAX_DEPTH = 2

-- One command (a list of strings or numbers) as a RESP array of bulk strings: binary-safe, nothing is escaped.
function _M.encode(args)
  local n = #args
  local out = { "*", n, "\r\n" }
  for i = 1, n do
    local a = tostring(args[i])
    out[#out + 1] = "$"
    out[#out + 1] = #a
    out[#out + 1] = "\r\n"
    out[#out + 1] = a
    out[#out + 1] = "\r\n"
  end
  return concat(out)
end

-- Reads one reply from `sock` (receive() reads a line without its CRLF, receive(n) n bytes).
-- Returns the value; `false, message` for a Redis error reply; nil, why for a broken connection or protocol.
local function read_reply(sock, depth)
  local line, err = sock:receive()
  if not line then return nil, err end
  local kind, rest = line:sub(1, 1), line:sub(2)
  if kind == "+" then return rest end
  if kind == "-" then return false, rest end
  if kind == ":" then
    local n = tonumber(rest)
    if not n then return nil, "protocol error: bad integer" end
    return n
  end
  if kind == "$" then
    local n = tonumber(rest)
    if not n or n % 1 ~= 0 or n > MAX_BULK then return nil, "protocol error: bad bulk length" end
    if n < 0 then return NULL end
    local data, e = sock:receive(n + 2)
    if not data then return nil, e end
    if data:sub(-2) ~= "\r\n" then return nil, "protocol error: bulk not terminated" end
    return data:sub(1, n)
  end
  if kind == "*" then
    local n = tonumber(rest)
    if not n or n % 1 ~= 0 or n > MAX_ARRAY or depth >= MAX_DEPTH then return nil, "protocol error: bad array" end
    if n < 0 then return NULL end
    local out = {}
    for i = 1, n do
      local v, e = read_reply(sock, depth + 1)
      if v == nil then return nil, e end
      -- An error inside an array (EXEC's) is kept as a table so the array stays whole.
      out[i] = v == false and { err = e } or v
    end
    return out
  end
  return nil, "protocol error: unknown reply type"
end
_M.read_reply = function(sock) return read_reply(sock, 0) end

-- Sends the commands in one write and reads one reply per command. conf: { host, port, timeoutMs, poolSize,
-- idleMs }. Returns the list of replies (a Redis error reply is `{ err = message }` in its place), or nil and why
-- (connect, send or read failed, timed out, or the reply was not RESP): the connection is then closed, else it
-- goes back to the worker's pool for `idleMs`.
function _M.pipeline(conf, cmds)
  local sock = ngx.socket.tcp()
  local t = conf.timeoutMs or 50
  sock:settimeouts(t, t, t)
  local ok, err = sock:connect(conf.host, conf.port, { pool = "portico-redis:" .. conf.host .. ":" .. conf.port })
  if not ok then return nil, "connect: " .. tostring(err) end
  local req = {}
  for i = 1, #cmds do req[i] = _M.encode(cmds[i]) end
  local _, e = sock:send(concat(req))
  if e then
    sock:close()
    return nil, "send: " .. tostring(e)
  end
  local replies = {}
  for i = 1, #cmds do
    local v, why = read_reply(sock, 0)
    if v == nil then
      sock:close()
      return nil, "read: " .. tostring(why)
    end
    replies[i] = v == false and { err = why } or v
  end
  sock:setkeepalive(conf.idleMs or 10000, conf.poolSize or 50)
  return replies
end

return _M
