# stop_bpftrace PID (sourced): end a bpftrace started in the background with
# SIGINT, on which it prints its maps and exits, and reap it.  bpftrace 0.17
# can miss a SIGINT that lands just before it blocks in epoll_wait (then it
# sleeps on, seen once in ~14 runs of t_usdt beside two busy loops), so the
# signal is sent again each second while it lives; after 60 s it is killed
# and the status says so (1).
stop_bpftrace() {
	_sb_i=0
	kill -INT "$1" 2> /dev/null
	while [ -d "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2> /dev/null)" != Z ]; do
		sleep 0.1
		_sb_i=$((_sb_i + 1))
		if [ $_sb_i -ge 600 ]; then
			kill -KILL "$1" 2> /dev/null
			wait "$1" 2> /dev/null
			return 1
		fi
		[ $((_sb_i % 10)) = 0 ] && kill -INT "$1" 2> /dev/null
	done
	wait "$1" 2> /dev/null
	return 0
}
