-- One decision of a shared rate limiter, atomically on the Redis server (see _redis.py).
--
-- These are the rules of _machine.py, step for step, in the names used there: a change here
-- is a change there, and the test suite runs every rule against both (tests/test_limits*.py),
-- with a property test driving both with the same random calls (test_limits_stores_agree.py).
--
-- The script runs on every decision and its cost is most of what a decision adds to a round
-- trip, so it does only what the decision needs: the state is fixed-size binary (no keys to
-- parse or write); the windows are read by admissions only, the last failure by refusals and
-- readings only; and each decision's functions are made only by the decision that calls them
-- (a function is a new closure on every run of a script).
--
-- KEYS[1]  the limiter's hash, fields:
--          's'  the state but the windows and the last failure: STATE's doubles, in its order
--          'w:' .. a budget's name  its window: the units it holds (a double), then its takes,
--               oldest first, 16 bytes each (start and units, two doubles)
--          'f'  the last failure (MessagePack: service, detail, status, retry_after)
-- ARGV[1]  the decision: reserve, unreserve, succeed, fail, release or read
-- ARGV[2]  the settings, 13 little-endian doubles: failure_step, max_throttle, recovery_step,
--          successes_per_step, quiet_seconds, quiet_recovery_step, failures_to_open,
--          cooldown_seconds, max_cooldown_seconds, probe_timeout_seconds, max_wait_seconds,
--          longest, retry_after_cap
-- ARGV[3]  the budgets: max_units and window_seconds of each, little-endian doubles
-- ARGV[4]  the budgets' names (quoted, so without commas), joined by commas
-- ARGV[5]  the time of the decision, or '' for the server's clock (TIME)
-- ARGV[6]  the decision's arguments (see each below)
--
-- The reply starts with the kept code: 2 x (the milliseconds the state is still kept) + 1 when
-- the state existed before the decision (0: it was made anew; a reading's code is that bit
-- alone). An admission is one string of numbers: the code, the permit, the wait and the
-- start; a refusal or a reading is an array; any other decision's reply is the code alone.
-- Times travel as text ('%.17g'), every digit kept.

local key, op = KEYS[1], ARGV[1]
local failure_step, max_throttle, recovery_step, successes_per_step, quiet_seconds,
      quiet_recovery_step, failures_to_open, cooldown_seconds, max_cooldown, probe_timeout,
      max_wait, longest, retry_cap = struct.unpack('<ddddddddddddd', ARGV[2])

local now
if ARGV[5] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1e6
else
  now = tonumber(ARGV[5])
end

-- The state: LimiterState's fields, by their names there, but the windows, the last failure
-- and until when the key is kept (expires). A probe's permit is negative: NONE (0) stands for
-- no probe, since every number is true in Lua.
local CLOSED, OPEN, HALF_OPEN = 'closed', 'open', 'half-open'
local NONE = 0
local STATE = '<dddddddddddddddd'  -- 16 doubles, in the order below
local windowed = op == 'reserve' or op == 'unreserve'

local names, nb = {}, 0
local fields = {'s'}
if windowed then
  for name in string.gmatch(ARGV[4], '[^,]+') do
    nb = nb + 1
    names[nb], fields[nb + 1] = name, 'w:' .. name
  end
end
if op == 'reserve' or op == 'read' then fields[#fields + 1] = 'f' end
local stored = redis.call('HMGET', key, unpack(fields))
local existed = 1
local st
if stored[1] then
  local code
  st = {}
  code, st.epoch, st.cooldown, st.opened_at, st.probe, st.probe_started, st.next_id, st.level,
    st.quiet_from, st.successes_toward_step, st.failures_at_max, st.blocked_until,
    st.successes, st.failures, st.refusals, st.expires = struct.unpack(STATE, stored[1])
  st.state = code == 0 and CLOSED or code == 1 and OPEN or HALF_OPEN
else
  existed = 0  -- Rules.fresh
  st = {state = CLOSED, epoch = 0, cooldown = cooldown_seconds, opened_at = -math.huge,
        probe = NONE, probe_started = 0.0, next_id = 1, level = 0.0, quiet_from = -math.huge,
        successes_toward_step = 0, failures_at_max = 0, blocked_until = -math.huge,
        successes = 0, failures = 0, refusals = 0, expires = -math.huge}
end

local wins = nil  -- the windows, read (admissions only)
local failure_now = nil  -- a failure this decision recorded, to be written
local admitted = nil  -- an admission's permit, wait and start
local reply = nil  -- any other answer but the code

local function text(x) return string.format('%.17g', x) end
local function quote_failure(at)  -- the last failure, UpstreamFailure's fields, from reply[at]
  local packed = stored[#fields]
  if fields[#fields] == 'f' and packed then
    local failure = cmsgpack.unpack(packed)
    reply[at], reply[at + 1], reply[at + 2] = failure[1], failure[2], failure[3]
    reply[at + 3] = failure[4] and text(failure[4])
  end
end
local function permit_of(arg) if arg == '' then return nil end return tonumber(arg) end

if windowed then
  -- --- the sliding windows (SlidingWindow) ----------------------------------------------
  -- A window: its field's bytes, and the position of its oldest take still kept (after the
  -- units the window holds, so no decision walks the takes to count them).
  local TAKE, HEAD = 16, 8
  local EMPTY = struct.pack('<d', 0)
  local caps, spans = {}, {}
  local takes = {}  -- the decision's units per budget (ARGV[6] or ARGV[7], comma-separated)
  for v in string.gmatch(op == 'reserve' and ARGV[6] or ARGV[7], '[^,]+') do
    takes[#takes + 1] = tonumber(v)
  end
  wins = {}
  for i = 1, nb do
    caps[i], spans[i] = struct.unpack('<dd', ARGV[3], 16 * i - 15)
    local buf = stored[i + 1] or EMPTY
    local total = #buf > HEAD and struct.unpack('<d', buf) or 0
    wins[i] = {buf = buf, h = HEAD + 1, total = total, changed = false}
  end

  local function take_at(w, pos) return struct.unpack('<dd', w.buf, pos) end

  if op == 'reserve' then
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

    -- --- admission (Rules.reserve, Circuit.admit_probe) ---------------------------------
    local function refuse(reason, off_for, budget, units)
      st.refusals = st.refusals + 1
      reply = {0, reason, text(off_for), budget or 0, units or 0}
      quote_failure(6)
    end

    local function reserve()
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
            st.state, st.probe = HALF_OPEN, NONE
          end
        elseif st.probe ~= NONE then
          local expires = st.probe_started + probe_timeout
          if now < expires then reason, until_ = 'probing', expires end
        end
        if reason then return refuse(reason, until_ - now) end
        permit = -st.next_id
        st.next_id, st.probe = st.next_id + 1, permit
      end
      local factor = 1.0 + st.level
      local widest = 1.0 + max_throttle
      local paced = now
      for i = 1, nb do
        if takes[i] > 0 then
          paced = math.max(paced, earliest(wins[i], takes[i], spans[i] * factor,
                                           spans[i] * widest, caps[i]))
        end
      end
      local start = math.max(paced, st.blocked_until)
      local wait = start - now
      if wait > max_wait then
        if permit < 0 then st.probe = NONE end
        if st.blocked_until > paced then return refuse('held', wait) end
        return refuse('wait', wait)
      end
      for i = 1, nb do
        if takes[i] > 0 then add(wins[i], start, takes[i]) end
      end
      if permit < 0 then st.probe_started = start end
      admitted = {permit, wait, start}
    end

    reserve()
  else  -- unreserve (Rules.unreserve): start, then takes
    local start = tonumber(ARGV[6])
    for i = 1, nb do
      local w, units = wins[i], takes[i]
      if units > 0 then  -- SlidingWindow.remove
        for pos = #w.buf - TAKE + 1, w.h, -TAKE do
          local begun, taken = take_at(w, pos)
          if math.abs(begun - start) <= 1e-6 and taken >= units then
            local rest = ''
            if taken > units then rest = struct.pack('<dd', begun, taken - units) end
            w.buf = string.sub(w.buf, 1, pos - 1) .. rest .. string.sub(w.buf, pos + TAKE)
            w.total, w.changed = w.total - units, true
            break
          end
        end
      end
    end
  end
elseif op == 'read' then
  reply = {existed, st.state, text(st.level), text(st.cooldown),
           st.successes, st.failures, st.refusals}
  quote_failure(8)
  return reply
else
  -- --- the outcomes (Rules.succeed, fail, release; Circuit) -----------------------------
  local function open_circuit()
    st.state, st.opened_at, st.probe, st.epoch = OPEN, now, NONE, st.epoch + 1
    st.failures_at_max = 0
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

  local permit = permit_of(ARGV[6])
  if op == 'succeed' then
    st.successes = st.successes + 1
    local current = true
    if permit ~= nil and permit < 0 then
      if permit ~= st.probe then
        current = false
      else  -- Circuit.close
        st.state, st.probe, st.cooldown, st.epoch = CLOSED, NONE, cooldown_seconds, st.epoch + 1
      end
    elseif not is_current(permit) then
      current = false
    end
    if current then
      st.failures_at_max = 0
      if st.level > 0.0 then
        if now - st.quiet_from >= quiet_seconds then
          set_level(st.level - quiet_recovery_step)
        else
          st.successes_toward_step = st.successes_toward_step + 1
          if st.successes_toward_step >= successes_per_step then
            st.successes_toward_step = 0
            set_level(st.level - recovery_step)
          end
        end
      end
    end
  elseif op == 'fail' then
    -- permit, service, detail, status ('' for none), retry_after ('' for none)
    local status = ARGV[9] ~= '' and tonumber(ARGV[9]) or false
    local retry_after = ARGV[10] ~= '' and tonumber(ARGV[10]) or nil
    local failure = {ARGV[7], ARGV[8], status, retry_after or false}
    local function fail()
      st.failures = st.failures + 1
      failure_now, st.quiet_from, st.successes_toward_step = failure, now, 0
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
    fail()
  elseif op == 'release' then  -- permit, retry_after ('' for none)
    hold(ARGV[7] ~= '' and tonumber(ARGV[7]) or nil)
    if permit ~= nil and permit < 0 and permit == st.probe then st.probe = NONE end
  else
    return redis.error_reply('unknown limiter decision ' .. tostring(op))
  end
end

-- --- the state written back ----------------------------------------------------------------

-- Rules.keep_for: kept well past the longest span any rule looks back or ahead. The expiry
-- is moved on only once less than half of that is left: one command less per decision.
local keep = 2 * math.max(longest, st.blocked_until - now)
local extend = st.expires < now + keep / 2
if extend then st.expires = now + keep end
local state = struct.pack(STATE, st.state == CLOSED and 0 or st.state == OPEN and 1 or 2,
  st.epoch, st.cooldown, st.opened_at, st.probe, st.probe_started, st.next_id, st.level,
  st.quiet_from, st.successes_toward_step, st.failures_at_max, st.blocked_until,
  st.successes, st.failures, st.refusals, st.expires)
local changed = false  -- a window or a failure to write beside the state
if wins then
  for i = 1, nb do changed = changed or wins[i].changed end
end
if changed or failure_now then
  local writes = {'s', state}
  if wins then  -- the windows that changed (other processes' budgets left as they are)
    for i = 1, nb do
      local w = wins[i]
      if w.changed then
        writes[#writes + 1] = 'w:' .. names[i]
        writes[#writes + 1] = struct.pack('<d', w.total) .. string.sub(w.buf, w.h)
      end
    end
  end
  if failure_now then
    writes[#writes + 1] = 'f'
    writes[#writes + 1] = cmsgpack.pack(failure_now)
  end
  redis.call('HSET', key, unpack(writes))
else
  redis.call('HSET', key, 's', state)
end
if extend then redis.call('PEXPIRE', key, math.ceil(keep * 1000)) end

local kept = 2 * math.ceil((st.expires - now) * 1000) + existed
if admitted then
  return string.format('%d %d %.17g %.17g', kept, admitted[1], admitted[2], admitted[3])
end
if reply then
  reply[1] = kept
  return reply
end
return kept
