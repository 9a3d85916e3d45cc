// Services start as child processes; give each file room, and run files one at a time so two
// stacks never compete for the two cores.
module.exports = { ...require('../jest.preset.cjs'), testTimeout: 120000, maxWorkers: 1 };
