// Starts nucleo-emulator on a free port for one test file and stops it when the file's tests end:
// `const emu = useEmulator(binary)`, then `emu.baseUrl` inside the tests. The emulator prints
// "listening on http://127.0.0.1:PORT" once it accepts connections.
import { spawn } from 'node:child_process';
import { after, before } from 'node:test';

export function useEmulator(binary, args = []) {
  const emu = { process: undefined, baseUrl: undefined };
  before(async () => {
    emu.process = spawn(binary, ['--port', '0', '--exit-with-parent', ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    emu.baseUrl = await new Promise((resolve, reject) => {
      let out = '';
      emu.process.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      emu.process.on('exit', (code) => reject(new Error(`nucleo-emulator exited with ${code}: ${out}`)));
    });
  });
  after(() => emu.process?.kill('SIGTERM'));
  return emu;
}
