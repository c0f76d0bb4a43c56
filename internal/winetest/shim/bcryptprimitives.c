/*
 * A stand-in for Windows' bcryptprimitives.dll, for running the library's
 * test binaries under Wine 8, which lacks the DLL. The Go runtime (1.22+)
 * loads it from system32 at start-up for ProcessPrng, its one source of
 * randomness; without it every Go program aborts before main.
 *
 * ProcessPrng is implemented over RtlGenRandom, which advapi32 exports as
 * SystemFunction036 and Wine implements. Test use only: it is built by
 * `make test-windows` into a private Wine prefix, never shipped.
 */
#include <windows.h>

typedef BOOLEAN(WINAPI *rtlgenrandom)(PVOID, ULONG);

static rtlgenrandom gen;

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	if (gen == NULL) {
		HMODULE advapi = LoadLibraryA("advapi32.dll");
		if (advapi == NULL)
			return FALSE;
		gen = (rtlgenrandom)GetProcAddress(advapi, "SystemFunction036");
		if (gen == NULL)
			return FALSE;
	}
	/* RtlGenRandom takes a ULONG length; feed it in pieces. */
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!gen(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)inst;
	(void)reason;
	(void)reserved;
	return TRUE;
}
