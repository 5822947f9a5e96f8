#!/usr/bin/env bash
# No fixed cost per call hides in cuda/ and every byte that crosses PCIe is counted: device memory comes only from
# the context's pool (grip_cuda_alloc/grip_cuda_free in cuda/core/device.cu, never cudaMalloc/cudaFree elsewhere),
# no kernel file waits for the whole device (cudaDeviceSynchronize), and every copy between host and device goes
# through grip_cuda_memcpy, which counts it for grip_plugin.ctx_stats (a copy within the device may stay a plain
# cudaMemcpy), and no kernel file makes or names a stream of its own or launches on one. Reads the sources only.
set -euo pipefail
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
cd "$src"
perl -e '
use strict;
use warnings;
my ($bad, $seen) = (0, 0);
for my $file (sort glob("cuda/*/*.cu cuda/*/*/*.cu cuda/*/*.cuh cuda/*/*/*.cuh")) {
    next if $file eq "cuda/core/device.cu"; # the pool and the counted copy themselves
    open(my $fh, "<", $file) or die "$file: $!";
    my $text = do { local $/; <$fh> };
    $text =~ s{/\*.*?\*/}{my $c = $&; $c =~ tr/\n//cd; $c}gse; # comments out, line numbers kept
    $text =~ s{//[^\n]*}{}g;
    my $report = sub {
        my ($at, $what) = @_;
        my $line = 1 + (substr($text, 0, $at) =~ tr/\n//);
        print STDERR "FAIL: $file:$line: $what\n";
        $bad++;
    };
    while ($text =~ /\bcuda(?:Malloc(?:Async|Managed|Pitch|3D)?|Free(?:Async)?|MallocFromPoolAsync)\(/g) {
        $seen++;
        $report->($-[0], "device memory outside the context pool (use grip_cuda_alloc / grip_cuda_free)");
    }
    while ($text =~ /\bcudaDeviceSynchronize\(/g) {
        $seen++;
        $report->($-[0], "a wait for the whole device (wait for the default stream: cudaStreamSynchronize(0))");
    }
    # every call queues on the default stream of the calling thread (plugin.h, "Synchrony"; CMake builds the
    # kernels with --default-stream per-thread): a stream made here, or the legacy one, would leave that order
    while ($text =~ /\bcudaStream(?:Create\w*|Legacy|PerThread)\b|\bcudaStream_t\b/g) {
        $seen++;
        $report->($-[0], "a stream other than the default stream of the calling thread");
    }
    while ($text =~ /<<<((?:[^<>]|<[^<>]*>)*)>>>/g) {
        my ($config, $at) = ($1, $-[0]);
        $seen++;
        1 while $config =~ s/\([^()]*\)//g; # commas inside parentheses out
        my $args = () = $config =~ /,/g;
        $report->($at, "a launch on a stream of its own (grid, block and shared memory only)") if $args >= 3;
    }
    while ($text =~ /\bcudaMemcpy\w*\(([^;]*);/g) {
        $seen++;
        next if $1 =~ /\bcudaMemcpyDeviceToDevice\b/;
        $report->($-[0], "a copy that is not counted (host and device: grip_cuda_memcpy)");
    }
}
print "device calls: $seen checked\n";
print(($bad ? 0 : 1), " passed, ", ($bad ? 1 : 0), " failed\n");
exit($bad ? 1 : 0);
'
