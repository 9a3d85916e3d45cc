export type { Queue } from 'bullmq';
export { createEventPublisher, type EventPublisher } from './event-publisher';
export { createImportQueue, type ImportQueue } from './import-queue';
export { createQueueInspector, type QueueInspector } from './inspector';
export {
  addDeliveryJobs,
  addEventJobs,
  addImportJob,
  type DeliveryJob,
  openEveryQueue,
  openQueue,
  openWorker,
  producerConnection,
  workerConnection,
} from './queues';
