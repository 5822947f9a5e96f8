#!/usr/bin/env bash
# Every call that fault injection can make fail passes its hook (src/core/fault.h, cuda/core/check.cuh), so that
# test_faults and test_faults_cuda reach every failure path: a CUDA allocation, copy or fill, launch check or CUB
# algorithm in cuda/, each wrapped in the hook of its kind. Reads the sources only.
set -euo pipefail
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
cd "$src"
perl -e '
use strict;
use warnings;
# (what, the call, what must come right before it)
my @rules = (
    ["device allocation", qr/\bcudaMalloc(?:Async)?\(/, qr/(?:GRIP_CUDA_CHECK_ALLOC\(\s*\w+\s*,|GRIP_CUDA_ALLOC\()\s*$/],
    ["device copy or fill", qr/\bcudaMem(?:cpy|set)\w*\(/, qr/(?:GRIP_CUDA_CHECK_COPY\(\s*\w+\s*,|GRIP_CUDA_COPY\()\s*$/],
    # a launch check; (void) clears an error on purpose; a launcher returns its launch error to a checked caller
    ["launch check", qr/\bcudaGetLastError\(\)/, qr/(?:GRIP_CUDA_CHECK_LAUNCH\(\s*\w+\s*,|GRIP_CUDA_LAUNCH\(|\(void\)|\breturn)\s*$/],
    # a CUB algorithm that runs (not the size query, whose temporary storage is NULL)
    ["CUB algorithm", qr/\bcub::Device\w+::\w+\((?!\s*(?:NULL|nullptr)\s*,)/,
     qr/(?:GRIP_CUDA_CHECK_LAUNCH\(\s*\w+\s*,|GRIP_CUDA_LAUNCH\()\s*$/],
);
my ($bad, $seen) = (0, 0);
for my $file (sort glob("cuda/*/*.cu cuda/*/*/*.cu cuda/*/*.cuh cuda/*/*/*.cuh src/*/*.c src/*/*.h")) {
    next if $file eq "cuda/core/check.cuh" or $file eq "src/core/fault.h"; # the hooks themselves
    open(my $fh, "<", $file) or die "$file: $!";
    my $text = do { local $/; <$fh> };
    # comments out, keeping the line breaks so that line numbers stay right
    $text =~ s{/\*.*?\*/}{my $c = $&; $c =~ tr/\n//cd; $c}gse;
    $text =~ s{//[^\n]*}{}g;
    for my $r (@rules) {
        my ($what, $call, $hook) = @$r;
        while ($text =~ /$call/g) {
            my $at = $-[0];
            $seen++;
            my $before = substr($text, $at > 200 ? $at - 200 : 0, $at > 200 ? 200 : $at);
            next if $before =~ $hook;
            my $line = 1 + (substr($text, 0, $at) =~ tr/\n//);
            print STDERR "FAIL: $file:$line: a $what bypasses its fault-injection hook\n";
            $bad++;
        }
    }
}
print "fault hooks: $seen calls checked\n";
print(($bad ? 0 : 1), " passed, ", ($bad ? 1 : 0), " failed\n");
exit($bad ? 1 : 0);
'
