-- One decision of a shared rate limiter, atomically on the Redis server (see _redis.py).
--
-- These are the rules of _machine.py, step for step, in the names used there: a change here
-- is a change there, and the test suite runs every rule against both (tests/test_limits*.py),
-- with a property test driving both with the same random calls (test_limits_stores_agree.py).
--
-- KEYS[1]  the limiter's hash: field 'm' holds the state but the windows (MessagePack), and
--          'w:' .. a budget's name its window's takes, oldest first, 16 bytes each (start and
--          units, two doubles), so a decision reads and writes a take or two, not the window.
-- ARGV[1]  the decision: reserve, unreserve, succeed, fail, release or read
-- ARGV[2]  the settings, a MessagePack array: failure_step, max_throttle, recovery_step,
--          successes_per_step, quiet_seconds, quiet_recovery_step, failures_to_open,
--          cooldown_seconds, max_cooldown_seconds, probe_timeout_seconds, max_wait_seconds,
--          longest, retry_after_cap, then name, max_units and window_seconds of each budget
-- ARGV[3]  the time of the decision, or '' for the server's clock (TIME)
-- ARGV[4]  the decision's arguments (see each below)
--
-- The reply starts with 1 when the state existed before the decision (0: it was made
-- anew), then the decision's answer; times travel as text ('%.17g'), every digit kept.

local key = KEYS[1]
local op = ARGV[1]

local cfg = cmsgpack.unpack(ARGV[2])
local failure_step, max_throttle, recovery_step, successes_per_step = cfg[1], cfg[2], cfg[3], cfg[4]
local quiet_seconds, quiet_recovery_step, failures_to_open = cfg[5], cfg[6], cfg[7]
local cooldown_seconds, max_cooldown, probe_timeout, max_wait = cfg[8], cfg[9], cfg[10], cfg[11]
local longest, retry_cap = cfg[12], cfg[13]
local widest = 1.0 + max_throttle
local names, caps, spans = {}, {}, {}
for i = 1, (#cfg - 13) / 3 do
  names[i], caps[i], spans[i] = cfg[11 + 3 * i], cfg[12 + 3 * i], cfg[13 + 3 * i]
end
local nb = #names

local now
if ARGV[3] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1e6
else
  now = tonumber(ARGV[3])
end

local function text(x) return string.format('%.17g', x) end
local function numbers(csv)
  local out = {}
  for v in string.gmatch(csv, '[^,]+') do out[#out + 1] = tonumber(v) end
  return out
end
local function permit_of(arg) if arg == '' then return nil end return tonumber(arg) end
local function quote_failure(reply, at, failure)  -- UpstreamFailure's fields, from reply[at]
  if failure then
    reply[at], reply[at + 1], reply[at + 2] = failure[1], failure[2], failure[3]
    reply[at + 3] = failure[4] and string.format('%.17g', failure[4])
  end
end

-- The state: LimiterState's fields, by their names there (false stands for None), but
-- the windows: the units each holds (totals), and until when the key is kept (expires).
local CLOSED, OPEN, HALF_OPEN = 'closed', 'open', 'half-open'

local fields = {'m'}
if op == 'reserve' or op == 'unreserve' then
  for i = 1, nb do fields[i + 1] = 'w:' .. names[i] end
end
local stored = redis.call('HMGET', key, unpack(fields))
local existed = 1
local st
if stored[1] then
  st = cmsgpack.unpack(stored[1])
else
  existed = 0  -- Rules.fresh
  st = {state = CLOSED, epoch = 0, cooldown = cooldown_seconds, opened_at = -math.huge,
        probe = false, probe_started = 0.0, next_id = 1, level = 0.0, quiet_from = -math.huge,
        successes_toward_step = 0, failures_at_max = 0, blocked_until = -math.huge,
        successes = 0, failures = 0, refusals = 0, last_failure = false, totals = {},
        expires = -math.huge}
end

-- --- the sliding windows (SlidingWindow) ------------------------------------------------
-- A window: its takes' bytes, the position of the oldest take still kept, and the units of
-- the takes kept (st.totals[name], so no decision walks the takes to count them).

local TAKE = 16
local wins = nil
local function windows()
  wins = {}
  for i = 1, nb do
    local buf = stored[i + 1] or ''
    local total = #buf > 0 and st.totals[names[i]] or 0
    wins[i] = {buf = buf, h = 1, total = total, changed = false}
  end
end

local function take_at(w, pos) return struct.unpack('<dd', w.buf, pos) end

local function earliest(w, units, window, wide, capacity)
  while w.h <= #w.buf do  -- forget what can never count again
    local begun, taken = take_at(w, w.h)
    if begun + wide <= now or (begun + window <= now and w.total - taken >= capacity) then
      w.h, w.total, w.changed = w.h + TAKE, w.total - taken, true
    else
      break
    end
  end
  if w.h > #w.buf then return now end
  local start = math.max(now, (take_at(w, #w.buf - TAKE + 1)))
  local newer = w.total
  if newer + units <= capacity then return start end  -- room: nothing to walk
  for pos = w.h, #w.buf, TAKE do
    if newer + units <= capacity then break end
    local begun, taken = take_at(w, pos)
    start = math.max(start, begun + window)
    newer = newer - taken
  end
  return start
end

local function add(w, start, units)
  local last = #w.buf - TAKE + 1
  if last >= w.h and (take_at(w, last)) == start then
    local _, taken = take_at(w, last)
    w.buf = string.sub(w.buf, 1, last - 1) .. struct.pack('<dd', start, taken + units)
  else
    w.buf = w.buf .. struct.pack('<dd', start, units)
  end
  w.total, w.changed = w.total + units, true
end

local function remove(w, start, units)
  for pos = #w.buf - TAKE + 1, w.h, -TAKE do
    local begun, taken = take_at(w, pos)
    if math.abs(begun - start) <= 1e-6 and taken >= units then
      local rest = ''
      if taken > units then rest = struct.pack('<dd', begun, taken - units) end
      w.buf = string.sub(w.buf, 1, pos - 1) .. rest .. string.sub(w.buf, pos + TAKE)
      w.total, w.changed = w.total - units, true
      return
    end
  end
end

-- --- the rules (Rules, Circuit) ----------------------------------------------------------

local function refuse(reason, off_for, budget, units)
  st.refusals = st.refusals + 1
  local reply = {existed, 'refused', reason, text(off_for), budget or 0, units or 0}
  quote_failure(reply, 7, st.last_failure)
  return reply
end

local function open_circuit()
  st.state, st.opened_at, st.probe, st.epoch = OPEN, now, false, st.epoch + 1
  st.failures_at_max = 0
end

local function close_circuit()
  st.state, st.probe, st.cooldown, st.epoch = CLOSED, false, cooldown_seconds, st.epoch + 1
end

local function is_current(permit)
  return (permit == nil or permit == st.epoch) and st.state == CLOSED
end

local function set_level(level)
  level = tonumber(string.format('%.9f', level))  -- round(level, 9)
  st.level = math.min(math.max(level, 0.0), max_throttle)
end

local function hold(retry_after)
  if retry_after ~= nil then
    retry_after = math.min(retry_after, retry_cap)
    if now + retry_after > st.blocked_until then st.blocked_until = now + retry_after end
  end
end

local function reserve(takes)
  for i = 1, nb do
    if takes[i] > caps[i] then return refuse('too-large', 0.0, i, takes[i]) end
  end
  local permit
  if st.state == CLOSED then
    permit = st.epoch
  else  -- Circuit.admit_probe
    local reason, until_
    if st.state == OPEN then
      local reopens = st.opened_at + st.cooldown
      if now < reopens then
        reason, until_ = 'open', math.max(reopens, st.blocked_until)
      else
        st.state, st.probe = HALF_OPEN, false
      end
    elseif st.probe then
      local expires = st.probe_started + probe_timeout
      if now < expires then reason, until_ = 'probing', expires end
    end
    if reason then return refuse(reason, until_ - now) end
    permit = -st.next_id
    st.next_id, st.probe = st.next_id + 1, permit
  end
  local factor = 1.0 + st.level
  local paced = now
  windows()
  for i = 1, nb do
    if takes[i] > 0 then
      paced = math.max(paced, earliest(wins[i], takes[i], spans[i] * factor, spans[i] * widest, caps[i]))
    end
  end
  local start = math.max(paced, st.blocked_until)
  local wait = start - now
  if wait > max_wait then
    if permit < 0 then st.probe = false end
    if st.blocked_until > paced then return refuse('held', wait) end
    return refuse('wait', wait)
  end
  for i = 1, nb do
    if takes[i] > 0 then add(wins[i], start, takes[i]) end
  end
  if permit < 0 then st.probe_started = start end
  return {existed, 'admitted', permit, text(wait), text(start)}
end

local function succeed(permit)
  st.successes = st.successes + 1
  if permit ~= nil and permit < 0 then
    if permit ~= st.probe then return end
    close_circuit()
  elseif not is_current(permit) then
    return
  end
  st.failures_at_max = 0
  if st.level <= 0.0 then return end
  if now - st.quiet_from >= quiet_seconds then
    set_level(st.level - quiet_recovery_step)
    return
  end
  st.successes_toward_step = st.successes_toward_step + 1
  if st.successes_toward_step >= successes_per_step then
    st.successes_toward_step = 0
    set_level(st.level - recovery_step)
  end
end

local function fail(permit, failure, retry_after)
  st.failures = st.failures + 1
  st.last_failure, st.quiet_from, st.successes_toward_step = failure, now, 0
  hold(retry_after)
  if permit ~= nil and permit < 0 then
    if permit == st.probe then
      st.cooldown = math.min(st.cooldown * 2, max_cooldown)
      open_circuit()
    end
    return
  end
  if not is_current(permit) then return end
  if st.level >= max_throttle then
    st.failures_at_max = st.failures_at_max + 1
    if st.failures_at_max >= failures_to_open then
      open_circuit()
      return
    end
  end
  set_level(st.level + failure_step)
end

local function release(permit, retry_after)
  hold(retry_after)
  if permit ~= nil and permit < 0 and permit == st.probe then st.probe = false end
end

-- --- the decision --------------------------------------------------------------------------

local reply
if op == 'read' then
  reply = {existed, st.state, text(st.level), text(st.cooldown),
           st.successes, st.failures, st.refusals}
  quote_failure(reply, 8, st.last_failure)
  return reply
elseif op == 'reserve' then
  reply = reserve(numbers(ARGV[4]))
elseif op == 'unreserve' then
  windows()
  local takes = numbers(ARGV[5])  -- start, then takes
  for i = 1, nb do
    if takes[i] > 0 then remove(wins[i], tonumber(ARGV[4]), takes[i]) end
  end
  reply = {existed}
elseif op == 'succeed' then
  succeed(permit_of(ARGV[4]))
  reply = {existed}
elseif op == 'fail' then
  -- permit, service, detail, status ('' for none), retry_after ('' for none)
  local status = ARGV[7] ~= '' and tonumber(ARGV[7]) or false
  local retry_after = ARGV[8] ~= '' and tonumber(ARGV[8]) or nil
  fail(permit_of(ARGV[4]), {ARGV[5], ARGV[6], status, retry_after or false}, retry_after)
  reply = {existed}
elseif op == 'release' then
  release(permit_of(ARGV[4]), ARGV[5] ~= '' and tonumber(ARGV[5]) or nil)
  reply = {existed}
else
  return redis.error_reply('unknown limiter decision ' .. tostring(op))
end

-- Rules.keep_for: kept well past the longest span any rule looks back or ahead. The expiry
-- is moved on only once less than half of that is left: one command less per decision.
local keep = 2 * math.max(longest, st.blocked_until - now)
local extend = (st.expires or -math.huge) < now + keep / 2
if extend then st.expires = now + keep end
local writes = {'m', false}
if wins then  -- the windows, as they are kept (other processes' budgets left as they are)
  for i = 1, nb do
    local w = wins[i]
    st.totals[names[i]] = w.total
    if w.changed then
      writes[#writes + 1] = 'w:' .. names[i]
      writes[#writes + 1] = string.sub(w.buf, w.h)
    end
  end
end
writes[2] = cmsgpack.pack(st)
redis.call('HSET', key, unpack(writes))
if extend then redis.call('PEXPIRE', key, math.ceil(keep * 1000)) end
reply[#reply + 1] = math.ceil((st.expires - now) * 1000)
return reply
