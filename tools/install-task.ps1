<#
.SYNOPSIS
Runs `etwaudit collect` at every boot as SYSTEM through Task Scheduler, or removes that task.

.DESCRIPTION
Registers the scheduled task "etwaudit" (see -TaskName). It starts at boot as
SYSTEM, with no time limit, and writes to %ProgramData%\etwaudit\audit.db. The
folder is created readable and writable by SYSTEM and Administrators only: the
database says which program touched which file, which is not for every user.
A folder there that another account made first is refused, not taken over.

Task Scheduler's own restart covers a task that fails to start; a second
trigger every 5 minutes starts the collector again if it has ended for any
other reason (a running collector makes that trigger do nothing).

-Uninstall stops the collector (etwaudit stop, then Stop-ScheduledTask for what
is left), removes the task and stops its ETW session ("etwaudit",
or the one given with --etw-session in -CollectArguments). The database
stays; delete the folder to remove it.

Run from an elevated PowerShell.

.EXAMPLE
powershell -ExecutionPolicy Bypass -File tools\install-task.ps1 -Exe 'C:\Program Files\etwaudit\etwaudit.exe'

.EXAMPLE
powershell -ExecutionPolicy Bypass -File tools\install-task.ps1 -Uninstall
#>
[CmdletBinding()]
param(
    # etwaudit.exe to run (copy it somewhere only administrators can write, such as Program Files).
    [string]$Exe = (Join-Path $env:ProgramFiles 'etwaudit\etwaudit.exe'),
    # Name of the scheduled task.
    [string]$TaskName = 'etwaudit',
    # More arguments for `etwaudit collect`, e.g. @('--exclude-path', 'C:\Windows\Temp\*').
    [string[]]$CollectArguments = @(),
    # Register the task but do not start it now.
    [switch]$NoStart,
    # Remove the task instead.
    [switch]$Uninstall
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$identity = [Security.Principal.WindowsIdentity]::GetCurrent()
if (-not ([Security.Principal.WindowsPrincipal]$identity).IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) {
    throw 'install-task.ps1 needs administrator rights: run it from an elevated PowerShell (Run as administrator)'
}

$dataDir = Join-Path $env:ProgramData 'etwaudit'
$database = Join-Path $dataDir 'audit.db'

if ($Uninstall) {
    $task = Get-ScheduledTask -TaskName $TaskName -ErrorAction SilentlyContinue
    # The session the task's collector used: --etw-session NAME, if given.
    $session = 'etwaudit'
    if ($task -and $task.Actions.Count -gt 0 -and
        "$($task.Actions[0].Arguments)" -match '--etw-session(?:=|\s+)(?:"([^"]*)"|(\S+))') {
        $session = if ($Matches[1]) { $Matches[1] } else { $Matches[2] }
    }
    # Its database: --db PATH, as registered.
    $taskDatabase = $database
    if ($task -and $task.Actions.Count -gt 0 -and
        "$($task.Actions[0].Arguments)" -match '--db(?:=|\s+)(?:"([^"]*)"|(\S+))') {
        $taskDatabase = if ($Matches[1]) { $Matches[1] } else { $Matches[2] }
    }
    if ($task) {
        # First ask the collector to stop (it commits what it holds and closes
        # its session with the kernel's last rundown); Stop-ScheduledTask only
        # kills what is left.
        $taskExe = "$($task.Actions[0].Execute)"
        if ($taskExe -and (Test-Path -LiteralPath $taskExe -PathType Leaf)) {
            & { $ErrorActionPreference = 'Continue'; & $taskExe stop --db $taskDatabase --timeout 30s }
        }
        Stop-ScheduledTask -TaskName $TaskName -ErrorAction SilentlyContinue
        Unregister-ScheduledTask -TaskName $TaskName -Confirm:$false
        Write-Output "Removed the scheduled task '$TaskName'."
    } else {
        Write-Output "There is no scheduled task '$TaskName'."
    }
    # Stopping the task ends the process, not its kernel trace session. (In a
    # child scope: Windows PowerShell turns a redirected line on stderr into a
    # terminating error under 'Stop'.)
    & { $ErrorActionPreference = 'Continue'; & logman.exe stop $session -ets *> $null }
    Write-Output "The database stays in $dataDir; delete that folder to remove it."
    return
}

if (-not (Test-Path -LiteralPath $Exe -PathType Leaf)) {
    throw "etwaudit.exe not found at '$Exe' (give its path with -Exe)"
}
$Exe = (Resolve-Path -LiteralPath $Exe).Path

# The data folder: SYSTEM and Administrators, full control, inherited by
# everything inside; nothing inherited from ProgramData (where Users may read).
# Users may also create folders and files in ProgramData and stay owners of
# what they create, so an existing folder, and everything in it, must have
# been made by SYSTEM, Administrators or this account, and be no link.
$system = New-Object Security.Principal.SecurityIdentifier('S-1-5-18')
$administrators = New-Object Security.Principal.SecurityIdentifier('S-1-5-32-544')
$trustedOwners = @($system, $administrators, $identity.User)
function Assert-TrustedItem($Item) {
    $owner = $null
    if (-not ($Item.Attributes -band [IO.FileAttributes]::ReparsePoint)) {
        $owner = (Get-Acl -LiteralPath $Item.FullName).GetOwner([Security.Principal.SecurityIdentifier])
    }
    if (-not $owner -or $trustedOwners -notcontains $owner) {
        throw "'$($Item.FullName)' is a link or was made by another account ($owner): check it, remove $dataDir and run this again"
    }
}
if (Test-Path -LiteralPath $dataDir) {
    Assert-TrustedItem (Get-Item -LiteralPath $dataDir -Force)
} else {
    New-Item -ItemType Directory -Path $dataDir | Out-Null
}
$acl = New-Object Security.AccessControl.DirectorySecurity
$acl.SetAccessRuleProtection($true, $false)
$acl.SetOwner($administrators)
$inheritance = [Security.AccessControl.InheritanceFlags]'ContainerInherit, ObjectInherit'
foreach ($account in $system, $administrators) {
    $rule = New-Object Security.AccessControl.FileSystemAccessRule(
        $account, [Security.AccessControl.FileSystemRights]::FullControl, $inheritance,
        [Security.AccessControl.PropagationFlags]::None, [Security.AccessControl.AccessControlType]::Allow)
    $acl.AddAccessRule($rule)
}
Set-Acl -LiteralPath $dataDir -AclObject $acl
Get-ChildItem -LiteralPath $dataDir -Recurse -Force | ForEach-Object { Assert-TrustedItem $_ }

# The task's command line, each argument quoted as the C runtime reads it back:
# backslashes are literal except before a quote.
function ConvertTo-CommandLineArgument([string]$Text) {
    if ($Text -and $Text -notmatch '[\s"]') { return $Text }
    return '"' + (($Text -replace '(\\*)"', '$1$1\"') -replace '(\\+)$', '$1$1') + '"'
}
$arguments = @('collect', '--db', $database, '--quiet') + $CollectArguments
$commandLine = @($arguments | ForEach-Object { ConvertTo-CommandLineArgument $_ }) -join ' '
$action = New-ScheduledTaskAction -Execute $Exe -Argument $commandLine -WorkingDirectory $dataDir
$triggers = @(
    (New-ScheduledTaskTrigger -AtStartup),
    (New-ScheduledTaskTrigger -Once -At (Get-Date) -RepetitionInterval (New-TimeSpan -Minutes 5))
)
$principal = New-ScheduledTaskPrincipal -UserId 'S-1-5-18' -LogonType ServiceAccount -RunLevel Highest
# Priority 4: a normal process (the default, 7, is below normal CPU, I/O and
# memory priority, and a starved consumer makes ETW drop buffers under load).
$settings = New-ScheduledTaskSettingsSet -Priority 4 -ExecutionTimeLimit ([TimeSpan]::Zero) -RestartCount 999 `
    -RestartInterval (New-TimeSpan -Minutes 1) -MultipleInstances IgnoreNew -StartWhenAvailable `
    -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -DontStopOnIdleEnd
Register-ScheduledTask -TaskName $TaskName -Action $action -Trigger $triggers -Principal $principal `
    -Settings $settings -Description 'etwaudit: records which process reads and writes which file' -Force | Out-Null
Write-Output "Registered the scheduled task '$TaskName': $Exe $commandLine"

if (-not $NoStart) {
    Start-ScheduledTask -TaskName $TaskName
    Write-Output "Started it. Query the database from an elevated prompt:"
    Write-Output "  etwaudit query summary --db `"$database`""
}
