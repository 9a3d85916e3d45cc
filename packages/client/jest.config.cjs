// Two test files start records-api and upload-service; one file at a time keeps them off each other's cores.
module.exports = { ...require('../../jest.preset.cjs'), testTimeout: 60000, maxWorkers: 1 };
