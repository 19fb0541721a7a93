<#
Acceptance run of etwaudit on a real Windows machine (Windows 8 or later),
from an elevated PowerShell. It drives etwaudit.exe as a user would and checks
what the live ETW collector records against what the script itself did:

  - a file opened BEFORE the collector starts and read while it runs is named
    while the collector runs (the start-up file-name rundown);
  - a file created, written, read, renamed and deleted shows each operation,
    the create as a create;
  - opening a missing file is a failed open (status 0xC0000034), not an open,
    and the totals count it as failed, not as an operation;
  - reading 64 KiB of a 100-byte file records 100 bytes;
  - a file opened delete-on-close (a temporary file) shows a delete, and a
    disposition set to "do not delete" shows none;
  - a file replaced as it was opened (File.WriteAllText on an existing one)
    is an overwrite;
  - 8 MiB written through the cache count 8 MiB of writes: the lazy writer's
    paging writes are kept apart, not counted again;
  - the run's event times come from the performance counter (clock qpc);
  - copying a tree of 4,000 files for 30 s loses no event;
  - the first event's time is within 1 s of the wall clock when it happened;
  - `etwaudit stop` stops the collector: exit 0 and its final summary;
  - `logman stop etwaudit -ets` during a run ends it with "was stopped by
    another program" and a closed run record;
  - a killed collector's session is replaced by the next run;
  - install-task.ps1 registers the task at priority 4 as SYSTEM, and
    -Uninstall removes it.

  powershell -ExecutionPolicy Bypass -File tools\acceptance-windows.ps1 [-Exe PATH] [-Work DIR]

Prints one line per check (PASS or FAIL, what, the figures) and exits 1 when
any check failed. Where ETW cannot run (Wine), it says "ETW unavailable" at
the first ETW call and exits 77.
#>
param(
    [string]$Exe = 'build-msvc\Release\etwaudit.exe',
    [string]$Work = (Join-Path $env:TEMP "etwaudit-acceptance-$PID")
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$identity = [Security.Principal.WindowsIdentity]::GetCurrent()
if (-not ([Security.Principal.WindowsPrincipal]$identity).IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) {
    throw 'acceptance-windows.ps1 needs an elevated PowerShell (kernel ETW sessions need administrator rights)'
}
if (-not (Test-Path -LiteralPath $Exe -PathType Leaf)) { throw "etwaudit.exe not found at '$Exe' (give it with -Exe)" }
$Exe = (Resolve-Path -LiteralPath $Exe).Path
$taskScript = Join-Path $PSScriptRoot 'install-task.ps1'
New-Item -ItemType Directory -Force -Path $Work | Out-Null
$script:failures = 0

function Check([string]$What, [bool]$Held, [string]$Figures) {
    $status = if ($Held) { 'PASS' } else { 'FAIL' }
    if (-not $Held) { $script:failures++ }
    Write-Output ('{0}  {1,-72} {2}' -f $status, $What, $Figures)
}

# Starts `etwaudit collect` on $Db in the background; its stderr goes to $Err.
function Start-Collector([string]$Db, [string]$Err) {
    $process = Start-Process -FilePath $Exe -PassThru -NoNewWindow -RedirectStandardError $Err `
        -ArgumentList @('collect', '--db', "`"$Db`"", '--coalesce-ms', '0', '--quiet')
    $null = $process.Handle  # ExitCode stays empty unless the handle is taken before the process ends
    return $process
}

# Waits until the collector has a run record and its session runs; stops the
# script with exit 77 where ETW does not work (Wine).
function Wait-Collecting($Process, [string]$Db, [string]$Err) {
    for ($i = 0; $i -lt 100; $i++) {
        if ($Process.HasExited) {
            $message = (Get-Content -LiteralPath $Err -Raw)
            if ($message -match 'OpenTraceW|StartTraceW|ETW') {
                Write-Output "ETW unavailable: $message"
                exit 77
            }
            throw "etwaudit collect ended at once (exit $($Process.ExitCode)): $message"
        }
        if ((Test-Path -LiteralPath $Db) -and (Query-Scalar $Db 'SELECT count(*) FROM collector_runs WHERE stopped_at IS NULL') -eq '1') {
            Start-Sleep -Seconds 3  # the session's first buffers and the start-up rundown
            return
        }
        Start-Sleep -Milliseconds 100
    }
    throw 'etwaudit collect did not start its run within 10 s'
}

# A SQL condition on v_events.path for a file of the work folder, by its name
# alone: $env:TEMP may be a short (8.3) path, the kernel reports long ones.
function Path-Is([string]$Path) {
    return "path LIKE '%\$(Split-Path -Leaf $Path)'"
}

# The first value of a read-only SQL query, as text. (Native calls run under
# 'Continue': under 'Stop', Windows PowerShell 5.1 turns a line on stderr
# behind 2>$null into a terminating error, as install-task.ps1 says.)
function Query-Scalar([string]$Db, [string]$Sql) {
    $out = & { $ErrorActionPreference = 'Continue'; & $Exe query --db $Db --sql $Sql --format csv 2>$null }
    if ($LASTEXITCODE -ne 0) { return '' }
    $lines = @($out)
    if ($lines.Count -lt 2) { return '' }
    return ($lines[1] -replace '^"|"$', '')
}

function Unix-Ns([DateTime]$Time) {
    return [int64](($Time.ToUniversalTime() - [DateTime]'1970-01-01T00:00:00Z'.ToUniversalTime()).Ticks * 100)
}

# --- one run with every kind of operation ------------------------------------
$db = Join-Path $Work 'audit.db'
$err = Join-Path $Work 'collect.err'
$before = Join-Path $Work 'opened-before.txt'
$small = Join-Path $Work 'small-100-bytes.txt'
$created = Join-Path $Work 'created.txt'
$renamed = Join-Path $Work 'renamed.txt'
$missing = Join-Path $Work 'missing.txt'
[IO.File]::WriteAllBytes($before, [byte[]](1..100))
[IO.File]::WriteAllBytes($small, [byte[]](1..100))
Remove-Item -LiteralPath $db, "$db-wal", "$db-shm", $created, $renamed, $missing -ErrorAction SilentlyContinue
$held = [IO.File]::Open($before, 'Open', 'Read', 'ReadWrite')  # open before the collector starts
$onClose = Join-Path $Work 'delete-on-close.tmp'
$kept = Join-Path $Work 'kept-by-disposition.txt'
$overwritten = Join-Path $Work 'overwritten.txt'
$eightMib = Join-Path $Work 'eight-mib.bin'
$tree = Join-Path $Work 'tree'
$treeCopy = Join-Path $Work 'tree-copy'
[IO.File]::WriteAllText($kept, 'still here after a disposition of FALSE')
[IO.File]::WriteAllText($overwritten, 'the first version, replaced during the run')
Remove-Item -LiteralPath $onClose, $eightMib, $treeCopy -Recurse -ErrorAction SilentlyContinue
if (-not (Test-Path -LiteralPath $tree)) {  # 40 folders of 100 files of 4 KiB
    $page = New-Object byte[] 4096
    foreach ($d in 1..40) {
        $folder = New-Item -ItemType Directory -Force -Path (Join-Path $tree "d$d")
        foreach ($f in 1..100) { [IO.File]::WriteAllBytes((Join-Path $folder.FullName "f$f.bin"), $page) }
    }
}
Add-Type -Namespace EtwAudit -Name Native -MemberDefinition @'
[DllImport("kernel32.dll", SetLastError = true)]
public static extern bool SetFileInformationByHandle(Microsoft.Win32.SafeHandles.SafeFileHandle file, int infoClass,
                                                     ref byte deleteFile, int size);
'@

$collector = Start-Collector $db $err
Wait-Collecting $collector $db $err

$buffer = New-Object byte[] 65536
$null = $held.Read($buffer, 0, 100)
$startedAt = Get-Date
[IO.File]::WriteAllText($created, 'written while etwaudit collects')
$null = [IO.File]::ReadAllText($created)
Move-Item -LiteralPath $created -Destination $renamed
Remove-Item -LiteralPath $renamed
try { $null = [IO.File]::OpenRead($missing) } catch { }
$stream = [IO.File]::OpenRead($small)
$readBytes = $stream.Read($buffer, 0, 65536)
$stream.Close()
# A temporary file: deleted when its handle closes, with no delete call.
$stream = New-Object IO.FileStream($onClose, [IO.FileMode]::Create, [IO.FileAccess]::ReadWrite, [IO.FileShare]::None, 4096,
    [IO.FileOptions]::DeleteOnClose)
$stream.WriteByte(1)
$stream.Close()
# A disposition of FALSE (FileDispositionInfo = 4): a request not to delete.
$stream = New-Object IO.FileStream($kept, [IO.FileMode]::Open, [Security.AccessControl.FileSystemRights]'Delete, Read',
    [IO.FileShare]'ReadWrite, Delete', 4096, [IO.FileOptions]::None)
$doNotDelete = [byte]0
$dispositionSet = [EtwAudit.Native]::SetFileInformationByHandle($stream.SafeFileHandle, 4, [ref]$doNotDelete, 1)
$stream.Close()
[IO.File]::WriteAllText($overwritten, '')  # CREATE_ALWAYS on an existing file: replaced, 0 bytes
# 8 MiB through the cache, then flushed: the lazy writer writes them again as paging I/O.
[IO.File]::WriteAllBytes($eightMib, (New-Object byte[] (8MB)))
$stream = [IO.File]::Open($eightMib, 'Open', 'ReadWrite')
$stream.Flush($true)
$stream.Close()
# Copies of a tree of 4,000 files for 30 s.
$copyStarted = Get-Date
$copies = 0
while (((Get-Date) - $copyStarted).TotalSeconds -lt 30) {
    Remove-Item -LiteralPath $treeCopy -Recurse -Force -ErrorAction SilentlyContinue
    Copy-Item -LiteralPath $tree -Destination $treeCopy -Recurse
    $copies++
}

# Named while the collector runs: the name came from the start-up rundown.
$beforeSql = "SELECT count(*) FROM v_events WHERE $(Path-Is $before) AND op = 'read'"
$namedLive = ''
for ($i = 0; $i -lt 100 -and $namedLive -ne '1'; $i++) {
    Start-Sleep -Milliseconds 100
    $namedLive = Query-Scalar $db ($beforeSql -replace 'count\(\*\)', 'min(count(*), 1)')
}
Check 'a file opened before the start, read during the run, is named during it' ($namedLive -eq '1') "reads found: $namedLive"
$held.Close()

$stop = & { $ErrorActionPreference = 'Continue'; & $Exe stop --db $db --timeout 60s 2>&1 } | Out-String
$stopExit = $LASTEXITCODE
$collector.WaitForExit()
$summary = Get-Content -LiteralPath $err -Raw
Check 'etwaudit stop: exit 0, and the collector exits 0' ($stopExit -eq 0 -and $collector.ExitCode -eq 0) "stop $stopExit, collect $($collector.ExitCode)"
Check 'the final summary says how the run ended and what the rundown named' `
    ($summary -match 'ended after .*: stopped by etwaudit stop' -and $summary -match "from the kernel's rundown: [1-9]") ($summary -replace "`r?`n", ' | ')

$ops = Query-Scalar $db "SELECT group_concat(op, ' ') FROM (SELECT DISTINCT op FROM v_events WHERE $(Path-Is $created) OR $(Path-Is $renamed) ORDER BY op)"
Check 'a file created, written, read, renamed and deleted shows each, the create as a create' `
    (@('create', 'write', 'read', 'rename', 'delete' | Where-Object { $ops -notmatch "\b$_\b" }).Count -eq 0) "ops: $ops"
$failedOpen = Query-Scalar $db "SELECT op || ' ' || coalesce(status, 'no status') FROM v_events WHERE $(Path-Is $missing) LIMIT 1"
Check 'opening a missing file is a failed open' ($failedOpen -eq 'open 0xC0000034') "recorded: $failedOpen"
$counted = Query-Scalar $db "SELECT coalesce(sum(a.events), 0) || ' ' || coalesce(sum(a.failed), 0) FROM activity a JOIN files f USING (file_id) WHERE f.$(Path-Is $missing)"
Check 'the failed open is counted as failed, not as an operation' ($counted -match '^0 [1-9]') "events, failed: $counted"
$smallRead = Query-Scalar $db "SELECT max(size) FROM v_events WHERE $(Path-Is $small) AND op = 'read'"
Check 'reading 64 KiB of a 100-byte file records 100 bytes' ($smallRead -eq '100' -and $readBytes -eq 100) "recorded: $smallRead, read: $readBytes"
$firstNs = Query-Scalar $db "SELECT min(time_ns) FROM v_events WHERE $(Path-Is $created) OR $(Path-Is $renamed)"
$skewMs = if ($firstNs) { [math]::Abs(([int64]$firstNs - (Unix-Ns $startedAt)) / 1e6) } else { [double]::NaN }
Check "the first event's time is within 1 s of the wall clock" ($firstNs -and $skewMs -le 1000) ('{0:N0} ms apart' -f $skewMs)

$onCloseOps = Query-Scalar $db "SELECT group_concat(op, ' ') FROM (SELECT DISTINCT op FROM v_events WHERE $(Path-Is $onClose) ORDER BY op)"
Check 'a file opened delete-on-close shows a delete at its close' ($onCloseOps -match '\bdelete\b' -and -not (Test-Path -LiteralPath $onClose)) "ops: $onCloseOps"
$keptDeletes = Query-Scalar $db "SELECT count(*) FROM v_events WHERE $(Path-Is $kept) AND op = 'delete'"
$keptInfos = Query-Scalar $db "SELECT count(*) FROM v_events WHERE $(Path-Is $kept) AND op = 'set_info'"
Check 'a disposition of "do not delete" shows no delete' ($dispositionSet -and $keptDeletes -eq '0' -and $keptInfos -ne '0' -and (Test-Path -LiteralPath $kept)) `
    "set: $dispositionSet, deletes $keptDeletes, set_info $keptInfos"
$overwrites = Query-Scalar $db "SELECT count(*) FROM v_events WHERE $(Path-Is $overwritten) AND op = 'overwrite'"
Check 'a file replaced as it was opened is an overwrite' ($overwrites -ne '' -and [int]$overwrites -ge 1) "overwrites: $overwrites"
$written = Query-Scalar $db "SELECT coalesce(sum(size), 0) FROM v_events WHERE $(Path-Is $eightMib) AND op = 'write'"
$paged = Query-Scalar $db "SELECT coalesce(sum(size), 0) FROM v_events WHERE $(Path-Is $eightMib) AND op = 'paging_write'"
Check "8 MiB written count 8 MiB of writes; the lazy writer's are apart" ($written -eq '8388608') "write $written bytes, paging_write $paged bytes"
$clock = Query-Scalar $db 'SELECT coalesce(clock, ''none'') FROM collector_runs WHERE run_id = 1'
Check "the run's event times come from the performance counter" ($clock -eq 'qpc') "clock: $clock"
$lost = Query-Scalar $db 'SELECT events_lost + events_dropped FROM collector_runs WHERE run_id = 1'
Check 'copying a tree of 4,000 files for 30 s loses no event' ($lost -eq '0' -and $copies -ge 1) "copies: $copies, lost and dropped: $lost"

# --- stopped from outside ------------------------------------------------------
$db2 = Join-Path $Work 'logman.db'
$err2 = Join-Path $Work 'logman.err'
Remove-Item -LiteralPath $db2, "$db2-wal", "$db2-shm" -ErrorAction SilentlyContinue
$collector = Start-Collector $db2 $err2
Wait-Collecting $collector $db2 $err2
& { $ErrorActionPreference = 'Continue'; & logman.exe stop etwaudit -ets *> $null }
$exited = $collector.WaitForExit(30000)
$message = Get-Content -LiteralPath $err2 -Raw
$reason = Query-Scalar $db2 'SELECT coalesce(exit_reason, ''left open'') FROM collector_runs ORDER BY run_id DESC LIMIT 1'
Check 'logman stop etwaudit -ets ends the run with its reason, the run closed' `
    ($exited -and $message -match "the ETW session 'etwaudit' was stopped by another program" -and $reason -match 'stopped by another program') `
    "exit $(if ($exited) { $collector.ExitCode } else { 'none after 30 s' }); run: $reason"

# --- a killed collector's session is replaced ----------------------------------
$db3 = Join-Path $Work 'killed.db'
$err3 = Join-Path $Work 'killed.err'
Remove-Item -LiteralPath $db3, "$db3-wal", "$db3-shm" -ErrorAction SilentlyContinue
$collector = Start-Collector $db3 $err3
Wait-Collecting $collector $db3 $err3
Stop-Process -Id $collector.Id -Force
$collector.WaitForExit()
$err4 = Join-Path $Work 'after-kill.err'
$collector = Start-Collector $db3 $err4
Wait-Collecting $collector $db3 $err4
$null = & { $ErrorActionPreference = 'Continue'; & $Exe stop --db $db3 --timeout 60s 2>&1 }
$collector.WaitForExit()
$killed = Query-Scalar $db3 'SELECT exit_reason FROM collector_runs WHERE run_id = 1'
Check "a killed collector's session is replaced by the next run" ($collector.ExitCode -eq 0 -and $killed -match 'interrupted') `
    "next run exit $($collector.ExitCode); killed run: $killed"

# --- the scheduled task ----------------------------------------------------------
& $taskScript -Exe $Exe -NoStart | Out-Null
$task = Get-ScheduledTask -TaskName 'etwaudit' -ErrorAction SilentlyContinue
$priority = if ($task) { $task.Settings.Priority } else { 'no task' }
$user = if ($task) { $task.Principal.UserId } else { 'no task' }
$level = if ($task) { $task.Principal.RunLevel } else { 'no task' }
Check 'the task runs at priority 4 as SYSTEM, elevated' ("$priority" -eq '4' -and "$user" -match 'SYSTEM|S-1-5-18' -and "$level" -eq 'Highest') `
    "priority $priority, user $user, run level $level"
& $taskScript -Uninstall | Out-Null
Check 'install-task.ps1 -Uninstall removes the task' (-not (Get-ScheduledTask -TaskName 'etwaudit' -ErrorAction SilentlyContinue)) ''

if ($script:failures -gt 0) {
    Write-Output "acceptance: $script:failures check(s) failed (work folder $Work)"
    exit 1
}
Write-Output 'acceptance: every check held'
Remove-Item -LiteralPath $Work -Recurse -Force -ErrorAction SilentlyContinue
