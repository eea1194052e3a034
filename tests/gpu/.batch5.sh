set -u
O=$OUT
gcc -O2 -shared -fPIC -Iinclude -o /tmp/rmlog.so tests/gpu/rmlog.c -ldl || exit 1
chmod 755 /tmp/rmlog.so
echo "== nvidia-smi natively as nobody (uid 65534): bit-15 and BinaryApi answers"
for args in "" "-q" "dmon -c 1"; do
	rm -f /tmp/nobody.rmlog; touch /tmp/nobody.rmlog; chmod 666 /tmp/nobody.rmlog
	RMLOG=/tmp/nobody.rmlog LD_PRELOAD=/tmp/rmlog.so setpriv --reuid=65534 --regid=65534 --clear-groups nvidia-smi $args > /tmp/nobody.out 2>&1
	echo "-- nobody nvidia-smi $args: rc=$? lines=$(wc -l < /tmp/nobody.out) calls=$(wc -l < /tmp/nobody.rmlog) N/A=$(grep -c 'N/A' /tmp/nobody.out)"
	grep -oE "cmd=0x(2080(8|9|a)[0-9a-f]{3}|2081[0-9a-f]{4}) size=[0-9]+ status=0x[0-9a-f]+" /tmp/nobody.rmlog | sort | uniq -c | tr '\n' ';'; echo
	grep -oE "alloc .*class=0x(73|208f|2081) size=[0-9]+ status=0x[0-9a-f]+" /tmp/nobody.rmlog | sed 's/.*class/class/' | sort | uniq -c | tr '\n' ';'; echo
	cp /tmp/nobody.rmlog $O/nobody$(echo "$args" | tr -dc 'a-z').rmlog
done
tests/gpu/workloads_check.sh $O/wl > $O/workloads.txt 2>&1; sed -n '/== nvidia-smi in a sandbox/,$p' $O/workloads.txt | cut -c1-600
tar czf $O/wl.tgz -C $O wl; rm -rf $O/wl
